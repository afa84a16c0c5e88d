package io.daggerworkbench.udf;

import io.daggerworkbench.udf.WireInput.DecodeFailure;
import java.util.Base64;
import java.util.Comparator;
import java.util.TreeMap;
import java.util.Map;

/**
 * JSON text of the well-known types that hold JSON ({@code google.protobuf.Struct},
 * {@code Value}, {@code ListValue}) and of {@code Any}, read straight off their serialized bytes.
 *
 * <p>The text is compact ({@code {"a":1,"b":[true,"x"]}}), keys sorted ({@link #KEYS}: an
 * {@code "@type"} first, then by name; a key sent twice keeps its last value), non-ASCII kept
 * as UTF-8, so the same value always reads as the same text, whatever order a producer wrote. Numbers
 * (always doubles in a {@code Value}) are written without a fraction when they are whole and
 * below 2^53 ({@code 5}, not {@code 5.0}), else as Java writes doubles; NaN and infinities,
 * which JSON cannot hold, as the strings protobuf's JSON uses ({@code "NaN"}). A {@code Value}
 * with no kind set is {@code null}. An {@code Any} is {@code {"@type": url, <its fields>}} when
 * the packed message's type is in the descriptor set, else {@code {"@type": url, "value":
 * <base64 bytes>}}.
 */
final class ProtoJson {
    private static final double SAFE_INTEGER = 9_007_199_254_740_992.0; // 2^53
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** The order of keys in every JSON object written: "@type" (an Any's) first, then by name. */
    static final Comparator<String> KEYS = Comparator
            .comparing((String key) -> !key.equals("@type"))
            .thenComparing(Comparator.naturalOrder());

    private ProtoJson() {}

    /** Finds the codec of a type URL's message ({@code type.googleapis.com/pkg.Msg}), or null. */
    interface TypeLookup {
        ProtoMessageCodec codec(String typeUrl);
    }

    static String struct(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        writeStruct(new WireInput(bytes), out, 0);
        return out.toString();
    }

    static String value(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        writeValue(new WireInput(bytes), out, 0);
        return out.toString();
    }

    static String list(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        writeList(new WireInput(bytes), out, 0);
        return out.toString();
    }

    static String any(byte[] bytes, TypeLookup types) {
        WireInput in = new WireInput(bytes);
        String url = null;
        byte[] packed = new byte[0];
        while (!in.atEnd()) {
            int tag = in.readTag();
            if (tag == (1 << 3 | WireInput.LEN)) {
                url = readString(in);
            } else if (tag == (2 << 3 | WireInput.LEN)) {
                packed = readBytes(in);
            } else {
                in.skipField(tag, 0);
            }
        }
        if (url == null || url.isEmpty()) {
            return packed.length == 0 ? "{}" : "{\"value\":" + quote(base64(packed)) + "}";
        }
        ProtoMessageCodec codec = types.codec(url);
        StringBuilder out = new StringBuilder("{\"@type\":").append(quote(url));
        if (codec == null) {
            return out.append(",\"value\":").append(quote(base64(packed))).append('}').toString();
        }
        Object finished;
        if (codec.raw()) {
            finished = codec.finishValue(packed);
        } else {
            Object[] state = codec.newState();
            codec.decode(new WireInput(packed), state, 0, 1);
            finished = codec.finishValue(state);
        }
        String fields = codec.json(finished);
        if (!codec.plain()) {
            out.append(",\"value\":").append(fields); // a packed Timestamp, Struct, wrapper...
        } else if (fields.length() > 2) {
            out.append(',').append(fields, 1, fields.length() - 1);
        }
        return out.append('}').toString();
    }

    private static void writeStruct(WireInput in, StringBuilder out, int depth) {
        WireInput.checkDepth(depth);
        Map<String, String> fields = new TreeMap<>(KEYS);
        while (!in.atEnd()) {
            int tag = in.readTag();
            if (tag != (1 << 3 | WireInput.LEN)) {
                in.skipField(tag, depth);
                continue;
            }
            WireInput entry = in.sub(in.readLength());
            String key = "";
            String value = "null";
            while (!entry.atEnd()) {
                int t = entry.readTag();
                if (t == (1 << 3 | WireInput.LEN)) {
                    key = readString(entry);
                } else if (t == (2 << 3 | WireInput.LEN)) {
                    StringBuilder v = new StringBuilder();
                    writeValue(entry.sub(entry.readLength()), v, depth + 1);
                    value = v.toString();
                } else {
                    entry.skipField(t, depth);
                }
            }
            fields.put(key, value);
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, String> e : fields.entrySet()) {
            out.append(first ? "" : ",").append(quote(e.getKey())).append(':').append(e.getValue());
            first = false;
        }
        out.append('}');
    }

    private static void writeList(WireInput in, StringBuilder out, int depth) {
        WireInput.checkDepth(depth);
        out.append('[');
        boolean first = true;
        while (!in.atEnd()) {
            int tag = in.readTag();
            if (tag != (1 << 3 | WireInput.LEN)) {
                in.skipField(tag, depth);
                continue;
            }
            out.append(first ? "" : ",");
            writeValue(in.sub(in.readLength()), out, depth + 1);
            first = false;
        }
        out.append(']');
    }

    /** A Value: its oneof's last member wins; a struct or list member sent twice merges. */
    private static void writeValue(WireInput in, StringBuilder out, int depth) {
        WireInput.checkDepth(depth);
        int kind = 0;
        String scalar = "null";
        java.io.ByteArrayOutputStream nested = new java.io.ByteArrayOutputStream();
        while (!in.atEnd()) {
            int tag = in.readTag();
            int number = tag >>> 3;
            int wire = tag & 7;
            if (number == 1 && wire == WireInput.VARINT) {
                in.readVarint64();
                kind = 1;
                scalar = "null";
            } else if (number == 2 && wire == WireInput.FIXED64) {
                kind = 2;
                scalar = number(Double.longBitsToDouble(in.readFixed64()));
            } else if (number == 3 && wire == WireInput.LEN) {
                kind = 3;
                scalar = quote(readString(in));
            } else if (number == 4 && wire == WireInput.VARINT) {
                kind = 4;
                scalar = in.readVarint64() != 0 ? "true" : "false";
            } else if ((number == 5 || number == 6) && wire == WireInput.LEN) {
                if (kind != number) {
                    nested.reset();
                }
                kind = number;
                nested.writeBytes(readBytes(in));
            } else {
                in.skipField(tag, depth);
            }
        }
        if (kind == 5) {
            writeStruct(new WireInput(nested.toByteArray()), out, depth + 1);
        } else if (kind == 6) {
            writeList(new WireInput(nested.toByteArray()), out, depth + 1);
        } else {
            out.append(scalar);
        }
    }

    private static String readString(WireInput in) {
        int length = in.readLength();
        int start = in.need(length);
        if (!Utf8.isValid(in.buf, start, length)) {
            throw new DecodeFailure("Protocol message had invalid UTF-8.");
        }
        return new String(in.buf, start, length, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(WireInput in) {
        int length = in.readLength();
        int start = in.need(length);
        return java.util.Arrays.copyOfRange(in.buf, start, start + length);
    }

    static String base64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** A double as a JSON number (see the class comment). */
    static String number(double d) {
        if (Double.isNaN(d)) {
            return "\"NaN\"";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        }
        if (d == Math.rint(d) && Math.abs(d) < SAFE_INTEGER) {
            return Long.toString((long) d);
        }
        return Double.toString(d);
    }

    /** A float as a JSON number, with the float's own shortest digits. */
    static String number(float f) {
        if (Float.isNaN(f) || Float.isInfinite(f)) {
            return number((double) f);
        }
        if (f == Math.rint(f) && Math.abs(f) < SAFE_INTEGER) {
            return Long.toString((long) f);
        }
        return Float.toString(f);
    }

    /** {@code text} as a JSON string: quotes, backslashes and control characters escaped. */
    static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 15]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
