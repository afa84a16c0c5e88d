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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.GenericRow;

/**
 * Reads one message type straight off the wire into the Row Spark's {@code from_protobuf} would
 * give it (same columns as {@code workbench.schemas.sparktypes.spark_schema}, default options).
 *
 * <p>Built once per message type from its descriptor; decoding a record then looks fields up by
 * number in an array and never touches the descriptor. Fields Spark's type leaves out (messages
 * with no fields, such as {@code google.protobuf.Empty}) are still parsed, so their bytes are
 * checked, but get no column. A message named {@code Timestamp} or {@code Duration} with fields
 * (seconds, nanos) becomes a {@link java.time.Instant} or {@link java.time.Duration} holding the
 * microseconds Spark computes ({@code seconds * 1e6 + nanos / 1000}).
 */
final class ProtoMessageCodec {
    private static final int PLAIN = 0;
    private static final int TIMESTAMP = 1;
    private static final int DURATION = 2;
    private static final int DENSE_NUMBERS = 1024;
    /** Valid seconds of google.protobuf.Timestamp (0001-01-01 to 9999-12-31) and Duration. */
    private static final long MIN_TIMESTAMP = -62_135_596_800L;
    private static final long MAX_TIMESTAMP = 253_402_300_799L;
    private static final long MAX_DURATION = 315_576_000_000L;

    final String fullName;
    private final int special;
    private ProtoFieldCodec[] columns = new ProtoFieldCodec[0];
    private ProtoFieldCodec[] dense;
    private int[] numbers;
    private ProtoFieldCodec[] byNumber;

    private ProtoMessageCodec(Descriptor descriptor) {
        this.fullName = descriptor.getFullName();
        this.special = specialKind(descriptor);
    }

    /** The codec of {@code descriptor}; recursive messages are refused, as Spark does without
     * {@code recursive.fields.max.depth}. */
    static ProtoMessageCodec of(Descriptor descriptor, boolean emitDefaults) {
        return new Builder(emitDefaults).build(descriptor);
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
        if (nested != null && nested.special != PLAIN && raw instanceof Object[] parts) {
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

    /** The column value of a read state: a Row, or an Instant / Duration. */
    Object finish(Object[] state) {
        if (special != PLAIN) {
            return time(state);
        }
        for (int i = 0; i < state.length; i++) {
            state[i] = columns[i].finish(state[i]);
        }
        return new GenericRow(state);
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

    /** Builds the codecs of a message and of every message it holds, each type once. */
    private static final class Builder {
        private final boolean emitDefaults;
        private final Map<String, ProtoMessageCodec> done = new HashMap<>();
        private final Set<String> building = new LinkedHashSet<>();

        Builder(boolean emitDefaults) {
            this.emitDefaults = emitDefaults;
        }

        ProtoMessageCodec build(Descriptor d) {
            ProtoMessageCodec known = done.get(d.getFullName());
            if (known != null) {
                return known;
            }
            if (!building.add(d.getFullName())) {
                throw new IllegalArgumentException("Message " + d.getFullName() + " is recursive ("
                        + String.join(" -> ", building) + " -> " + d.getFullName()
                        + "): the protobuf decoder does not support recursive messages.");
            }
            ProtoMessageCodec codec = new ProtoMessageCodec(d);
            List<ProtoFieldCodec> fields = new ArrayList<>();
            List<ProtoFieldCodec> kept = new ArrayList<>();
            Map<FieldDescriptor, ProtoFieldCodec> byField = new HashMap<>();
            for (FieldDescriptor fd : d.getFields()) {
                ProtoMessageCodec nested = fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE
                        ? build(fd.getMessageType()) : null;
                int slot = hasColumn(fd, nested) ? kept.size() : -1;
                ProtoFieldCodec f = new ProtoFieldCodec(fd, slot, nested, emitDefaults);
                fields.add(f);
                byField.put(fd, f);
                if (slot >= 0) {
                    kept.add(f);
                }
            }
            for (OneofDescriptor oneof : d.getOneofs()) {
                for (FieldDescriptor member : oneof.getFields()) {
                    byField.get(member).setSiblings(oneof.getFields().stream()
                            .filter(other -> other != member)
                            .mapToInt(other -> byField.get(other).slot)
                            .filter(slot -> slot >= 0).toArray());
                }
            }
            codec.index(fields, kept);
            building.remove(d.getFullName());
            done.put(d.getFullName(), codec);
            return codec;
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
