package io.daggerworkbench.udf;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.daggerworkbench.udf.WireInput.DecodeFailure;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * How one field is read off the wire and turned into the value Spark expects for its column.
 *
 * <p>Everything that depends on the field alone (kind, wire type, enum names, default, oneof
 * siblings, nested codec) is worked out once, when the codec is built; reading a record is a
 * switch on {@link #kind}. While a message is read its fields live in an {@code Object[]}
 * ("state", one slot per column): a scalar's value, an {@code ArrayList} for a repeated field,
 * a {@code LinkedHashMap} for a map, the nested state for a message. An implicit-presence
 * (proto3) scalar equal to its default is kept as null, i.e. unset, just as protobuf does.
 * {@link #finish} then turns a slot into the column value: a Row, an Object[], an Instant...
 */
final class ProtoFieldCodec {
    static final int INT32 = 0; // int32, uint32: low 32 bits of the varint
    static final int INT64 = 1; // int64, uint64
    static final int SINT32 = 2;
    static final int SINT64 = 3;
    static final int FIXED32 = 4; // fixed32, sfixed32
    static final int FIXED64 = 5; // fixed64, sfixed64
    static final int FLOAT = 6;
    static final int DOUBLE = 7;
    static final int BOOL = 8;
    static final int STRING = 9;
    static final int BYTES = 10;
    static final int ENUM = 11;
    static final int MESSAGE = 12; // also groups; Timestamp and Duration too (see the codec)
    static final int MAP = 13;

    private static final Object[] NO_ELEMENTS = new Object[0];
    private static final int DENSE_ENUM_RANGE = 4096;
    /** A map entry's value that is an unknown number of a closed enum: protobuf drops the entry. */
    private static final Object UNKNOWN_CLOSED = new Object();

    final String name;
    final int number;
    /** Column of this field in its message's row; -1 when Spark's type leaves it out. */
    final int slot;
    final int kind;
    /** Wire type of one value; a repeated number may also come packed (LEN). */
    final int wireType;
    final boolean repeated;
    final boolean packable;
    /** Implicit presence: a default value means unset. */
    final boolean implicit;
    final boolean required;
    /** Whether an unset field reads as its default rather than null. */
    private final boolean unsetIsDefault;
    final ProtoMessageCodec message; // MESSAGE: the nested codec; MAP: the entry's
    private final Object defaultValue;
    private final boolean utf8Check;
    private final boolean closedEnum;
    private final boolean entryValue;
    private final String enumName;
    private final UTF8String[] enumDense;
    private final int enumMin;
    private final Map<Integer, UTF8String> enumSparse;
    private int[] siblings = new int[0];

    ProtoFieldCodec(FieldDescriptor fd, int slot, ProtoMessageCodec message, boolean emitDefaults) {
        this.name = fd.getName();
        this.number = fd.getNumber();
        this.slot = slot;
        this.kind = fd.isMapField() ? MAP : kindOf(fd.getType());
        this.wireType = fd.getType() == FieldDescriptor.Type.GROUP
                ? WireInput.START_GROUP : wireTypeOf(kind);
        this.repeated = fd.isRepeated() && kind != MAP;
        this.packable = repeated && wireType != WireInput.LEN
                && wireType != WireInput.START_GROUP;
        this.implicit = !fd.isRepeated() && !fd.hasPresence();
        this.required = fd.isRequired();
        this.message = message;
        this.utf8Check = kind == STRING && fd.needsUtf8Check();
        this.closedEnum = kind == ENUM && fd.legacyEnumFieldTreatedAsClosed();
        this.entryValue = number == 2 && fd.getContainingType().getOptions().getMapEntry();
        EnumDescriptor enumType = kind == ENUM ? fd.getEnumType() : null;
        this.enumName = enumType == null ? null : enumType.getName();
        long[] range = enumRange(enumType);
        boolean dense = range[1] - range[0] < DENSE_ENUM_RANGE;
        this.enumMin = (int) range[0];
        this.enumDense = dense ? new UTF8String[(int) (range[1] - range[0] + 1)] : null;
        this.enumSparse = dense ? null : new HashMap<>();
        if (enumType != null) {
            for (EnumValueDescriptor v : enumType.getValues()) {
                putEnumName(v.getNumber(), UTF8String.fromString(v.getName()));
            }
        }
        boolean single = !fd.isRepeated() && kind != MESSAGE;
        this.defaultValue = single ? external(fd.getDefaultValue()) : null;
        this.unsetIsDefault = single && (fd.hasDefaultValue() || (implicit && emitDefaults));
    }

    /** The other members of this field's oneof, by slot: setting this one clears them. */
    void setSiblings(int[] slots) {
        this.siblings = slots;
    }

    boolean accepts(int wire) {
        return wire == wireType || (packable && wire == WireInput.LEN);
    }

    /** Reads one occurrence of the field (wire type {@code wire}) into {@code state}. */
    void read(WireInput in, int wire, Object[] state, int depth) {
        if (repeated) {
            readRepeated(in, wire, state, depth);
        } else if (kind == MESSAGE && message.raw()) {
            byte[] before = slot < 0 ? null : (byte[]) state[slot];
            if (before == null) {
                clearSiblings(state);
            }
            store(state, concat(before, readRaw(in, depth))); // merging = concatenating
        } else if (kind == MESSAGE) {
            Object[] nested = slot < 0 ? null : (Object[]) state[slot];
            if (nested == null) {
                clearSiblings(state);
                nested = message.newState();
            }
            readMessage(in, nested, depth);
            store(state, nested);
        } else if (kind == MAP) {
            readEntry(in, state, depth);
        } else {
            Object value = readScalar(in);
            if (value == null) { // an unknown number of a closed enum: protobuf keeps it unknown
                if (entryValue) {
                    store(state, UNKNOWN_CLOSED);
                }
                return;
            }
            clearSiblings(state);
            store(state, implicit && isDefault(value) ? null : value);
        }
    }

    private void store(Object[] state, Object value) {
        if (slot >= 0) {
            state[slot] = value;
        }
    }

    private void clearSiblings(Object[] state) {
        for (int s : siblings) {
            state[s] = null;
        }
    }

    @SuppressWarnings("unchecked")
    private void readRepeated(WireInput in, int wire, Object[] state, int depth) {
        ArrayList<Object> list = slot < 0 ? new ArrayList<>() : (ArrayList<Object>) state[slot];
        if (list == null) {
            list = new ArrayList<>();
            state[slot] = list;
        }
        if (kind == MESSAGE && message.raw()) {
            list.add(readRaw(in, depth));
        } else if (kind == MESSAGE) {
            Object[] nested = message.newState();
            readMessage(in, nested, depth);
            list.add(nested);
        } else if (packable && wire == WireInput.LEN) {
            int length = in.readLength();
            int end = in.pos + length;
            int outer = in.limit;
            in.limit = end;
            while (in.pos < end) {
                addScalar(list, in);
            }
            in.limit = outer;
        } else {
            addScalar(list, in);
        }
    }

    private void addScalar(ArrayList<Object> list, WireInput in) {
        Object value = readScalar(in);
        if (value != null) {
            list.add(value);
        }
    }

    private void readMessage(WireInput in, Object[] nested, int depth) {
        WireInput.checkDepth(depth + 1);
        if (wireType == WireInput.START_GROUP) {
            message.decode(in, nested, number, depth + 1);
            return;
        }
        int length = in.readLength();
        int outer = in.limit;
        in.limit = in.pos + length;
        message.decode(in, nested, 0, depth + 1);
        in.limit = outer;
    }

    /** The bytes of an embedded message kept whole (Struct, Value, ListValue, Any). */
    private byte[] readRaw(WireInput in, int depth) {
        WireInput.checkDepth(depth + 1);
        int length = in.readLength();
        int start = in.need(length);
        return Arrays.copyOfRange(in.buf, start, start + length);
    }

    private static byte[] concat(byte[] before, byte[] more) {
        if (before == null || before.length == 0) {
            return more;
        }
        byte[] both = Arrays.copyOf(before, before.length + more.length);
        System.arraycopy(more, 0, both, before.length, more.length);
        return both;
    }

    @SuppressWarnings("unchecked")
    private void readEntry(WireInput in, Object[] state, int depth) {
        Object[] entry = message.newState();
        readMessage(in, entry, depth);
        ProtoFieldCodec key = message.field(1);
        ProtoFieldCodec value = message.field(2);
        if (key == null || value == null || slot < 0) {
            return;
        }
        if (entry[value.slot] == UNKNOWN_CLOSED) {
            return;
        }
        Map<Object, Object> map = (Map<Object, Object>) state[slot];
        if (map == null) {
            map = new LinkedHashMap<>();
            state[slot] = map;
        }
        map.put(key.entryValue(entry[key.slot]), value.entryValue(entry[value.slot]));
    }

    /** A map key or value: never null (an absent one is its type's default). */
    private Object entryValue(Object raw) {
        if (kind == MESSAGE) {
            return message.finishValue(raw == null ? message.emptyState() : raw);
        }
        return raw != null ? raw : defaultValue;
    }

    Object readScalar(WireInput in) {
        switch (kind) {
            case INT32:
                return (int) in.readVarint64();
            case INT64:
                return in.readVarint64();
            case SINT32: {
                int n = (int) in.readVarint64();
                return (n >>> 1) ^ -(n & 1);
            }
            case SINT64: {
                long n = in.readVarint64();
                return (n >>> 1) ^ -(n & 1);
            }
            case FIXED32:
                return in.readFixed32();
            case FIXED64:
                return in.readFixed64();
            case FLOAT:
                return Float.intBitsToFloat(in.readFixed32());
            case DOUBLE:
                return Double.longBitsToDouble(in.readFixed64());
            case BOOL:
                return in.readVarint64() != 0;
            case STRING:
                return readString(in);
            case BYTES: {
                int length = in.readLength();
                int start = in.need(length);
                return Arrays.copyOfRange(in.buf, start, start + length);
            }
            case ENUM:
                return enumValue((int) in.readVarint64());
            default:
                throw new IllegalStateException("not a scalar: " + name);
        }
    }

    private UTF8String readString(WireInput in) {
        int length = in.readLength();
        int start = in.need(length);
        if (length == 0) {
            return UTF8String.EMPTY_UTF8;
        }
        if (Utf8.isValid(in.buf, start, length)) {
            return UTF8String.fromBytes(in.buf, start, length); // no copy: the record is ours
        }
        if (utf8Check) {
            throw new DecodeFailure("Protocol message had invalid UTF-8.");
        }
        return UTF8String.fromString(new String(in.buf, start, length, StandardCharsets.UTF_8));
    }

    /** The value's name; for an unknown number, protobuf-java's (and so Spark's) made-up name
     * {@code UNKNOWN_ENUM_VALUE_<Enum>_<number>}, or null when the enum is closed. */
    private UTF8String enumValue(int n) {
        UTF8String known = enumName(n);
        if (known != null || closedEnum) {
            return known;
        }
        return UTF8String.fromString("UNKNOWN_ENUM_VALUE_" + enumName + "_" + n);
    }

    private UTF8String enumName(int n) {
        if (enumDense == null) {
            return enumSparse.get(n);
        }
        long index = (long) n - enumMin;
        return index >= 0 && index < enumDense.length ? enumDense[(int) index] : null;
    }

    private void putEnumName(int n, UTF8String text) {
        if (enumName(n) != null) {
            return; // an alias: protobuf-java names a number by its first value
        }
        if (enumDense != null) {
            enumDense[n - enumMin] = text;
        } else {
            enumSparse.put(n, text);
        }
    }

    /** {lowest, highest} number of the enum's values ({0, 0} for a non-enum). */
    private static long[] enumRange(EnumDescriptor type) {
        long min = 0;
        long max = 0;
        if (type != null) {
            min = Integer.MAX_VALUE;
            max = Integer.MIN_VALUE;
            for (EnumValueDescriptor v : type.getValues()) {
                min = Math.min(min, v.getNumber());
                max = Math.max(max, v.getNumber());
            }
        }
        return new long[] {min, max};
    }

    private boolean isDefault(Object value) {
        switch (kind) {
            case INT32, SINT32, FIXED32:
                return (Integer) value == 0;
            case INT64, SINT64, FIXED64:
                return (Long) value == 0L;
            case FLOAT:
                return Float.floatToRawIntBits((Float) value) == 0;
            case DOUBLE:
                return Double.doubleToRawLongBits((Double) value) == 0L;
            case BOOL:
                return !(Boolean) value;
            case STRING:
                return ((UTF8String) value).numBytes() == 0;
            case BYTES:
                return ((byte[]) value).length == 0;
            case ENUM:
                return value == defaultValue;
            default:
                return false;
        }
    }

    /** The column value of a finished slot (see the class comment). Unset, a repeated field
     * or map is empty; a field with a declared (proto2) default is that default; a proto3
     * scalar is its default with {@code emitDefaults}; anything else is null. */
    Object finish(Object raw) {
        if (raw == null) {
            if (required) {
                throw new DecodeFailure("Message missing required fields: " + name);
            }
            if (repeated) {
                return NO_ELEMENTS;
            }
            if (kind == MAP) {
                return Collections.emptyMap();
            }
            return unsetIsDefault ? defaultValue : null;
        }
        if (repeated) {
            Object[] items = ((ArrayList<?>) raw).toArray();
            if (kind == MESSAGE) {
                for (int i = 0; i < items.length; i++) {
                    items[i] = message.finishValue(items[i]);
                }
            }
            return items;
        }
        return kind == MESSAGE ? message.finishValue(raw) : raw;
    }

    /** A finished column value of this field as JSON (for a message packed in an Any). */
    @SuppressWarnings("unchecked")
    void writeJson(Object value, StringBuilder out) {
        if (repeated) {
            out.append('[');
            Object[] items = (Object[]) value;
            for (int i = 0; i < items.length; i++) {
                out.append(i == 0 ? "" : ",");
                writeOne(items[i], out);
            }
            out.append(']');
        } else if (kind == MAP) {
            ProtoFieldCodec valueCodec = message.field(2);
            out.append('{');
            boolean first = true;
            Map<String, Object> sorted = new java.util.TreeMap<>(ProtoJson.KEYS);
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) value).entrySet()) {
                sorted.put(String.valueOf(e.getKey()), e.getValue());
            }
            for (Map.Entry<String, Object> e : sorted.entrySet()) {
                out.append(first ? "" : ",").append(ProtoJson.quote(e.getKey())).append(':');
                valueCodec.writeOne(e.getValue(), out);
                first = false;
            }
            out.append('}');
        } else {
            writeOne(value, out);
        }
    }

    private void writeOne(Object value, StringBuilder out) {
        switch (kind) {
            case MESSAGE -> message.writeJson(value, out);
            case FLOAT -> out.append(ProtoJson.number((Float) value));
            case DOUBLE -> out.append(ProtoJson.number((Double) value));
            case STRING, ENUM -> out.append(ProtoJson.quote(value.toString()));
            case BYTES -> out.append(ProtoJson.quote(ProtoJson.base64((byte[]) value)));
            default -> out.append(value); // integers, bool
        }
    }

    /** A protobuf-java value (getDefaultValue) as the value Spark takes for its column. */
    private Object external(Object value) {
        if (kind == STRING) {
            return UTF8String.fromString((String) value);
        }
        if (kind == BYTES) {
            return ((ByteString) value).toByteArray();
        }
        if (kind == ENUM) {
            return enumName(((EnumValueDescriptor) value).getNumber());
        }
        return value;
    }

    private static int kindOf(FieldDescriptor.Type type) {
        return switch (type) {
            case INT32, UINT32 -> INT32;
            case INT64, UINT64 -> INT64;
            case SINT32 -> SINT32;
            case SINT64 -> SINT64;
            case FIXED32, SFIXED32 -> FIXED32;
            case FIXED64, SFIXED64 -> FIXED64;
            case FLOAT -> FLOAT;
            case DOUBLE -> DOUBLE;
            case BOOL -> BOOL;
            case STRING -> STRING;
            case BYTES -> BYTES;
            case ENUM -> ENUM;
            case MESSAGE, GROUP -> MESSAGE;
        };
    }

    private static int wireTypeOf(int kind) {
        return switch (kind) {
            case FIXED32, FLOAT -> WireInput.FIXED32;
            case FIXED64, DOUBLE -> WireInput.FIXED64;
            case STRING, BYTES, MESSAGE, MAP -> WireInput.LEN;
            default -> WireInput.VARINT;
        };
    }
}
