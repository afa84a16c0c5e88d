package io.daggerworkbench.udf;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import io.daggerworkbench.udf.WireInput.DecodeFailure;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.sql.catalyst.expressions.GenericRow;

/**
 * Reads one message type straight off the wire into the Row Spark's {@code from_protobuf} would
 * give it (same columns as {@code workbench.schemas.sparktypes.spark_schema}, decoder options).
 *
 * <p>Built once per message type from its descriptor; decoding a record then looks fields up by
 * number in an array and never touches the descriptor. Fields Spark's type leaves out (messages
 * with no fields, such as {@code google.protobuf.Empty}) are still parsed, so their bytes are
 * checked, but get no column. A message named {@code Timestamp} or {@code Duration} with fields
 * (seconds, nanos) becomes a {@link java.time.Instant} or {@link java.time.Duration} holding the
 * microseconds Spark computes ({@code seconds * 1e6 + nanos / 1000}). The wrappers
 * ({@code google.protobuf.Int64Value}...) become their value; {@code Struct}, {@code Value},
 * {@code ListValue} and {@code Any} are kept as bytes while a record is read and become JSON
 * text ({@link ProtoJson}) when it is finished.
 *
 * <p>A message may hold itself (directly or not) up to {@code maxDepth} times along a path, as
 * Spark's {@code recursive.fields.max.depth}: the field that would nest it once more has no
 * column and is skipped on the wire. So one message type can have several codecs, one per
 * nesting context.
 */
final class ProtoMessageCodec {
    private static final int PLAIN = 0;
    private static final int TIMESTAMP = 1;
    private static final int DURATION = 2;
    private static final int WRAPPER = 3;
    private static final int STRUCT = 4;
    private static final int VALUE = 5;
    private static final int LIST = 6;
    private static final int ANY = 7;
    private static final Set<String> WRAPPERS = Set.of("google.protobuf.DoubleValue",
            "google.protobuf.FloatValue", "google.protobuf.Int64Value",
            "google.protobuf.UInt64Value", "google.protobuf.Int32Value",
            "google.protobuf.UInt32Value", "google.protobuf.BoolValue",
            "google.protobuf.StringValue", "google.protobuf.BytesValue");
    private static final int DENSE_NUMBERS = 1024;
    /** Valid seconds of google.protobuf.Timestamp (0001-01-01 to 9999-12-31) and Duration. */
    private static final long MIN_TIMESTAMP = -62_135_596_800L;
    private static final long MAX_TIMESTAMP = 253_402_300_799L;
    private static final long MAX_DURATION = 315_576_000_000L;

    final String fullName;
    private final int special;
    /** ANY: the codecs of packed messages, by type URL. */
    private ProtoJson.TypeLookup anyTypes;
    private ProtoFieldCodec[] columns = new ProtoFieldCodec[0];
    private ProtoFieldCodec[] dense;
    private int[] numbers;
    private ProtoFieldCodec[] byNumber;
    private volatile int[] jsonOrder;

    private ProtoMessageCodec(Descriptor descriptor) {
        this.fullName = descriptor.getFullName();
        this.special = specialKind(descriptor);
    }

    /** The codec of {@code descriptor}, a message holding itself at most {@code maxDepth}
     * times along a path (1 to 10); {@code anyTypes} finds the types packed in an Any. */
    static ProtoMessageCodec of(Descriptor descriptor, boolean emitDefaults, int maxDepth,
            ProtoJson.TypeLookup anyTypes) {
        return of(descriptor, emitDefaults, maxDepth, anyTypes, null);
    }

    /** As {@link #of(Descriptor, boolean, int, ProtoJson.TypeLookup)}, with columns for the
     * top-level fields named in {@code keep} only (null: every field): the others are skipped
     * on the wire (their bytes framed, not read). A kept member of a oneof keeps its whole
     * oneof, so the member set last still wins. */
    static ProtoMessageCodec of(Descriptor descriptor, boolean emitDefaults, int maxDepth,
            ProtoJson.TypeLookup anyTypes, Set<String> keep) {
        if (maxDepth < 1 || maxDepth > 10) {
            throw new IllegalArgumentException("maxDepth must be 1 to 10, not " + maxDepth);
        }
        Map<String, Integer> seen = new TreeMap<>();
        seen.put(descriptor.getFullName(), 1);
        return new Builder(emitDefaults, maxDepth, anyTypes).build(descriptor, seen,
                keep == null ? null : withOneofs(descriptor, keep));
    }

    private static Set<String> withOneofs(Descriptor descriptor, Set<String> keep) {
        Set<String> all = new java.util.TreeSet<>(keep);
        for (FieldDescriptor fd : descriptor.getFields()) {
            OneofDescriptor oneof = fd.getContainingOneof();
            if (keep.contains(fd.getName()) && oneof != null) {
                oneof.getFields().forEach(member -> all.add(member.getName()));
            }
        }
        return all;
    }

    /** Whether this is an ordinary message (a Row), not one of the types mapped to a value. */
    boolean plain() {
        return special == PLAIN;
    }

    /** Whether the codec keeps the message's bytes and writes them as JSON when finished. */
    boolean raw() {
        return special >= STRUCT;
    }

    Object[] newState() {
        return new Object[columns.length];
    }

    int columnCount() {
        return columns.length;
    }

    /** The column of top-level field {@code name}, or -1. */
    int columnOf(String name) {
        for (ProtoFieldCodec f : columns) {
            if (f.name.equals(name)) {
                return f.slot;
            }
        }
        return -1;
    }

    /** True when column {@code slot} of a read (unfinished) state is unset, or is a zero
     * Timestamp/Duration (seconds and nanos both 0). */
    boolean isUnset(Object[] state, int slot) {
        Object raw = state[slot];
        if (raw == null) {
            return true;
        }
        ProtoMessageCodec nested = columns[slot].message;
        boolean time = nested != null && (nested.special == TIMESTAMP || nested.special == DURATION);
        if (time && raw instanceof Object[] parts) {
            return parts[0] == null && parts[1] == null;
        }
        return false;
    }

    ProtoFieldCodec field(int number) {
        if (dense != null) {
            return number < dense.length ? dense[number] : null;
        }
        int i = Arrays.binarySearch(numbers, number);
        return i >= 0 ? byNumber[i] : null;
    }

    /** Reads fields into {@code state} up to the input's limit, or up to the end-group tag of
     * field {@code group} when it is not 0. */
    void decode(WireInput in, Object[] state, int group, int depth) {
        while (!in.atEnd()) {
            int tag = in.readTag();
            int wire = tag & 7;
            if (wire == WireInput.END_GROUP) {
                if (group != 0 && (tag >>> 3) == group) {
                    return;
                }
                throw DecodeFailure.endGroupMismatch();
            }
            ProtoFieldCodec f = field(tag >>> 3);
            if (f == null || !f.accepts(wire)) {
                in.skipField(tag, depth); // unknown, or a wire type protobuf keeps as unknown
            } else {
                f.read(in, wire, state, depth);
            }
        }
        if (group != 0) {
            throw DecodeFailure.truncated();
        }
    }

    /** The column value of a read state: a Row, an Instant / Duration, a wrapper's value, or
     * (for the raw kinds, whose state is their bytes) a JSON text. */
    Object finishValue(Object state) {
        return switch (special) {
            case TIMESTAMP, DURATION -> time((Object[]) state);
            case WRAPPER -> columns[0].finish(((Object[]) state)[0]);
            case STRUCT -> UTF8String.fromString(ProtoJson.struct((byte[]) state));
            case VALUE -> UTF8String.fromString(ProtoJson.value((byte[]) state));
            case LIST -> UTF8String.fromString(ProtoJson.list((byte[]) state));
            case ANY -> UTF8String.fromString(ProtoJson.any((byte[]) state, anyTypes));
            default -> finish((Object[]) state);
        };
    }

    /** A fresh (unset) state: an empty field array, or no bytes for the raw kinds. */
    Object emptyState() {
        return raw() ? new byte[0] : newState();
    }

    /** The Row of a read state of a plain message. */
    Object finish(Object[] state) {
        if (special != PLAIN) {
            return finishValue(state);
        }
        for (int i = 0; i < state.length; i++) {
            state[i] = columns[i].finish(state[i]);
        }
        return new GenericRow(state);
    }

    /** A finished value of this message type as JSON text: an object of the set fields (nulls,
     * empty lists and maps left out), a time as a string, a wrapper as its value. */
    String json(Object finished) {
        StringBuilder out = new StringBuilder();
        writeJson(finished, out);
        return out.toString();
    }

    void writeJson(Object finished, StringBuilder out) {
        switch (special) {
            case TIMESTAMP -> out.append(ProtoJson.quote(finished.toString()));
            case DURATION -> out.append(ProtoJson.quote(seconds((Duration) finished)));
            case WRAPPER -> columns[0].writeJson(finished, out);
            case STRUCT, VALUE, LIST, ANY -> out.append(finished.toString());
            default -> {
                GenericRow row = (GenericRow) finished;
                out.append('{');
                boolean first = true;
                for (int i : jsonOrder()) {
                    Object v = row.get(i);
                    if (v == null || (v instanceof Object[] a && a.length == 0)
                            || (v instanceof Map<?, ?> m && m.isEmpty())) {
                        continue;
                    }
                    out.append(first ? "" : ",").append(ProtoJson.quote(columns[i].name))
                            .append(':');
                    columns[i].writeJson(v, out);
                    first = false;
                }
                out.append('}');
            }
        }
    }

    /** The columns by name ({@link ProtoJson#KEYS}), the order of their JSON keys. */
    private int[] jsonOrder() {
        int[] order = jsonOrder;
        if (order == null) {
            order = java.util.stream.IntStream.range(0, columns.length).boxed()
                    .sorted((a, b) -> ProtoJson.KEYS.compare(columns[a].name, columns[b].name))
                    .mapToInt(Integer::intValue).toArray();
            jsonOrder = order;
        }
        return order;
    }

    /** protobuf's JSON form of a Duration: seconds with up to 9 decimals, then "s". */
    private static String seconds(Duration d) {
        return new java.math.BigDecimal(d.getSeconds())
                .add(java.math.BigDecimal.valueOf(d.getNano(), 9))
                .stripTrailingZeros().toPlainString() + "s";
    }

    private Object time(Object[] state) {
        long seconds = state[0] == null ? 0 : ((Number) state[0]).longValue();
        int nanos = state[1] == null ? 0 : ((Number) state[1]).intValue();
        boolean valid = special == TIMESTAMP
                ? seconds >= MIN_TIMESTAMP && seconds <= MAX_TIMESTAMP
                : Math.abs(seconds) <= MAX_DURATION;
        if (!valid) {
            throw new DecodeFailure(fullName + " out of range: seconds=" + seconds);
        }
        long micros = seconds * 1_000_000L + nanos / 1000;
        long wholeSeconds = Math.floorDiv(micros, 1_000_000L);
        long nanoOfSecond = Math.floorMod(micros, 1_000_000L) * 1000L;
        return special == TIMESTAMP
                ? Instant.ofEpochSecond(wholeSeconds, nanoOfSecond)
                : Duration.ofSeconds(wholeSeconds, nanoOfSecond);
    }

    private static int specialKind(Descriptor d) {
        switch (d.getFullName()) {
            case "google.protobuf.Struct":
                return STRUCT;
            case "google.protobuf.Value":
                return VALUE;
            case "google.protobuf.ListValue":
                return LIST;
            case "google.protobuf.Any":
                return ANY;
            default:
                if (WRAPPERS.contains(d.getFullName())) {
                    return WRAPPER;
                }
        }
        List<FieldDescriptor> fields = d.getFields();
        boolean secondsNanos = fields.size() == 2 && fields.get(0).getName().equals("seconds")
                && fields.get(1).getName().equals("nanos");
        if (!secondsNanos) {
            return PLAIN;
        }
        return switch (d.getName()) {
            case "Timestamp" -> TIMESTAMP;
            case "Duration" -> DURATION;
            default -> PLAIN;
        };
    }

    private void index(List<ProtoFieldCodec> fields, List<ProtoFieldCodec> kept) {
        columns = kept.toArray(new ProtoFieldCodec[0]);
        fields.sort((a, b) -> Integer.compare(a.number, b.number));
        int max = fields.isEmpty() ? 0 : fields.get(fields.size() - 1).number;
        if (max < DENSE_NUMBERS) {
            dense = new ProtoFieldCodec[max + 1];
            for (ProtoFieldCodec f : fields) {
                dense[f.number] = f;
            }
        } else {
            numbers = fields.stream().mapToInt(f -> f.number).toArray();
            byNumber = fields.toArray(new ProtoFieldCodec[0]);
        }
    }

    /** Builds the codecs of a message and of every message it holds, once per type and
     * nesting context (how often each type already encloses it). */
    private static final class Builder {
        private final boolean emitDefaults;
        private final int maxDepth;
        private final ProtoJson.TypeLookup anyTypes;
        private final Map<String, ProtoMessageCodec> done = new HashMap<>();

        Builder(boolean emitDefaults, int maxDepth, ProtoJson.TypeLookup anyTypes) {
            this.emitDefaults = emitDefaults;
            this.maxDepth = maxDepth;
            this.anyTypes = anyTypes;
        }

        /** The codec of {@code d}, where {@code seen} counts the messages enclosing it (itself
         * included, except for a map entry). */
        ProtoMessageCodec build(Descriptor d, Map<String, Integer> seen) {
            return build(d, seen, null);
        }

        /** As {@link #build(Descriptor, Map)}, with columns for the fields in {@code keep}
         * only (null: all); the others have no codec, so they are skipped as unknown. */
        ProtoMessageCodec build(Descriptor d, Map<String, Integer> seen, Set<String> keep) {
            String key = d.getFullName() + seen + (keep == null ? "" : "keep" + keep);
            ProtoMessageCodec known = done.get(key);
            if (known != null) {
                return known;
            }
            ProtoMessageCodec codec = new ProtoMessageCodec(d);
            done.put(key, codec);
            if (codec.special == ANY) {
                codec.anyTypes = anyTypes;
            }
            List<ProtoFieldCodec> fields = new ArrayList<>();
            List<ProtoFieldCodec> kept = new ArrayList<>();
            Map<FieldDescriptor, ProtoFieldCodec> byField = new HashMap<>();
            // a wrapper present without its value holds the value's default, as Spark unwraps it
            boolean emit = emitDefaults || codec.special == WRAPPER;
            for (FieldDescriptor fd : codec.raw() ? List.<FieldDescriptor>of() : d.getFields()) {
                if (keep != null && !keep.contains(fd.getName())) {
                    continue;
                }
                ProtoMessageCodec nested = null;
                if (fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                    nested = nested(fd, seen);
                    if (nested == null) {
                        continue; // recursion past maxDepth: no column, skipped as unknown
                    }
                }
                int slot = hasColumn(fd, nested) ? kept.size() : -1;
                ProtoFieldCodec f = new ProtoFieldCodec(fd, slot, nested, emit);
                fields.add(f);
                byField.put(fd, f);
                if (slot >= 0) {
                    kept.add(f);
                }
            }
            for (OneofDescriptor oneof : d.getOneofs()) {
                for (FieldDescriptor member : oneof.getFields()) {
                    ProtoFieldCodec f = byField.get(member);
                    if (f != null) {
                        f.setSiblings(oneof.getFields().stream()
                                .filter(other -> other != member && byField.containsKey(other))
                                .mapToInt(other -> byField.get(other).slot)
                                .filter(slot -> slot >= 0).toArray());
                    }
                }
            }
            codec.index(fields, kept);
            return codec;
        }

        /** The codec of a message field's type, or null when it would nest too deep. */
        private ProtoMessageCodec nested(FieldDescriptor fd, Map<String, Integer> seen) {
            Descriptor type = fd.getMessageType();
            if (fd.isMapField() || specialKind(type) != PLAIN) {
                return build(type, seen); // entries and well-known types do not count
            }
            int times = seen.getOrDefault(type.getFullName(), 0);
            if (times >= maxDepth) {
                return null;
            }
            Map<String, Integer> inner = new TreeMap<>(seen);
            inner.put(type.getFullName(), times + 1);
            return build(type, inner);
        }

        /** Whether Spark's type has a column for the field (sparktypes drops empty messages). */
        private static boolean hasColumn(FieldDescriptor fd, ProtoMessageCodec nested) {
            if (nested == null || nested.special != PLAIN) {
                return true;
            }
            if (fd.isMapField()) {
                return nested.field(1) != null && nested.field(1).slot >= 0
                        && nested.field(2) != null && nested.field(2).slot >= 0;
            }
            return nested.columnCount() > 0;
        }
    }
}
