package io.daggerworkbench.udf;

/** Strict UTF-8 validation (no overlong forms, surrogates or code points past U+10FFFF). */
final class Utf8 {
    private Utf8() {}

    /** Whether {@code b[off .. off+len)} is well-formed UTF-8. Bytes are compared signed:
     * continuation bytes (0x80..0xBF) are the values -128..-65. */
    static boolean isValid(byte[] b, int off, int len) {
        int i = off;
        int end = off + len;
        while (i < end && b[i] >= 0) {
            i++; // ASCII, the common case
        }
        while (i < end) {
            int lead = b[i++];
            if (lead >= 0) {
                continue;
            }
            if (lead < (byte) 0xE0) { // two bytes: C2..DF, then a continuation
                if (lead < (byte) 0xC2 || i >= end || b[i++] > (byte) 0xBF) {
                    return false;
                }
            } else if (lead < (byte) 0xF0) { // three bytes: no overlongs (E0) or surrogates (ED)
                if (i + 1 >= end) {
                    return false;
                }
                int second = b[i++];
                if (second > (byte) 0xBF
                        || (lead == (byte) 0xE0 && second < (byte) 0xA0)
                        || (lead == (byte) 0xED && second >= (byte) 0xA0)
                        || b[i++] > (byte) 0xBF) {
                    return false;
                }
            } else { // four bytes: F0 (second >= 90) .. F4 (second < 90); F5..FF never
                if (i + 2 >= end) {
                    return false;
                }
                int second = b[i++];
                if (second > (byte) 0xBF
                        || (((lead << 28) + (second - (byte) 0x90)) >> 30) != 0
                        || b[i++] > (byte) 0xBF
                        || b[i++] > (byte) 0xBF) {
                    return false;
                }
            }
        }
        return true;
    }
}
