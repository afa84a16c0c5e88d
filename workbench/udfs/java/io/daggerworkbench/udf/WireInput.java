package io.daggerworkbench.udf;

/**
 * A cursor over serialized protobuf bytes: varints, fixed-width numbers, lengths and skipping.
 *
 * <p>Reads stop at {@link #limit}, which {@link ProtoMessageCodec} narrows while it reads an
 * embedded message. Anything malformed raises {@link DecodeFailure} with protobuf-java's wording,
 * so the errors read like the ones Spark's {@code from_protobuf} reports.
 */
final class WireInput {
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LEN = 2;
    static final int START_GROUP = 3;
    static final int END_GROUP = 4;
    static final int FIXED32 = 5;
    /** protobuf-java's default recursion limit. */
    static final int MAX_DEPTH = 100;

    final byte[] buf;
    int pos;
    int limit;

    WireInput(byte[] buf) {
        this.buf = buf;
        this.limit = buf.length;
    }

    boolean atEnd() {
        return pos >= limit;
    }

    /** The next tag. Field number 0 is malformed; so is a tag past 32 bits, which
     * protobuf-java would cut to 32 bits and read on (upb, like this, refuses it). */
    int readTag() {
        long tag = readVarint64();
        if ((tag >>> 3) == 0) {
            throw new DecodeFailure("Protocol message contained an invalid tag (zero).");
        }
        if ((tag >>> 32) != 0) {
            throw new DecodeFailure("Protocol message contained an invalid tag.");
        }
        return (int) tag;
    }

    long readVarint64() {
        byte[] b = buf;
        int p = pos;
        if (p < limit && b[p] >= 0) {
            pos = p + 1;
            return b[p];
        }
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p >= limit) {
                throw DecodeFailure.truncated();
            }
            byte next = b[p++];
            result |= (long) (next & 0x7F) << shift;
            if (next >= 0) {
                pos = p;
                return result;
            }
        }
        throw new DecodeFailure("CodedInputStream encountered a malformed varint.");
    }

    int readFixed32() {
        int p = need(4);
        byte[] b = buf;
        return (b[p] & 0xFF) | (b[p + 1] & 0xFF) << 8 | (b[p + 2] & 0xFF) << 16 | b[p + 3] << 24;
    }

    long readFixed64() {
        long low = readFixed32() & 0xFFFFFFFFL;
        return low | (long) readFixed32() << 32;
    }

    /** A length prefix, checked against what is left; the cursor stays after the prefix. */
    int readLength() {
        long length = readVarint64();
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw new DecodeFailure("CodedInputStream encountered an embedded string or message "
                    + "which claimed to have negative size.");
        }
        if (length > limit - pos) {
            throw DecodeFailure.truncated();
        }
        return (int) length;
    }

    /** Advances over {@code n} bytes, returning where they start. */
    int need(int n) {
        int p = pos;
        if (n > limit - p) {
            throw DecodeFailure.truncated();
        }
        pos = p + n;
        return p;
    }

    /** A cursor over the next {@code length} bytes (a nested message); this one moves past them. */
    WireInput sub(int length) {
        int start = need(length);
        WireInput nested = new WireInput(buf);
        nested.pos = start;
        nested.limit = start + length;
        return nested;
    }

    /** Skips the value of a field read with {@code tag} (one protobuf does not know). */
    void skipField(int tag, int depth) {
        switch (tag & 7) {
            case VARINT -> readVarint64();
            case FIXED64 -> need(8);
            case LEN -> need(readLength());
            case START_GROUP -> skipGroup(tag >>> 3, depth + 1);
            case END_GROUP -> throw DecodeFailure.endGroupMismatch();
            case FIXED32 -> need(4);
            default -> throw new DecodeFailure("Protocol message tag had invalid wire type.");
        }
    }

    private void skipGroup(int number, int depth) {
        checkDepth(depth);
        while (true) {
            if (atEnd()) {
                throw DecodeFailure.truncated();
            }
            int tag = readTag();
            if ((tag & 7) == END_GROUP) {
                if ((tag >>> 3) != number) {
                    throw DecodeFailure.endGroupMismatch();
                }
                return;
            }
            skipField(tag, depth);
        }
    }

    static void checkDepth(int depth) {
        if (depth > MAX_DEPTH) {
            throw new DecodeFailure("Protocol message had too many levels of nesting.  May be "
                    + "malicious.  Use setRecursionLimit() to increase the recursion depth limit.");
        }
    }

    /** Why bytes could not be decoded; cheap to throw (no stack trace). */
    static final class DecodeFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DecodeFailure(String message) {
            super(message, null, false, false);
        }

        static DecodeFailure truncated() {
            return new DecodeFailure("While parsing a protocol message, the input ended "
                    + "unexpectedly in the middle of a field.  This could mean either that the "
                    + "input has been truncated or that an embedded message misreported its own "
                    + "length.");
        }

        static DecodeFailure endGroupMismatch() {
            return new DecodeFailure(
                    "Protocol message end-group tag did not match expected tag.");
        }
    }
}
