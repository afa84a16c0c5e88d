package io.daggerworkbench.udf;

import com.google.protobuf.Descriptors.Descriptor;
import io.daggerworkbench.udf.WireInput.DecodeFailure;
import java.io.Serializable;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.catalyst.expressions.GenericRow;

/**
 * {@code ProtoDecode(record BINARY) -> STRUCT<message: STRUCT<...>, error: STRING>}: decodes
 * serialized protobuf records of one message type on the JVM, for Spark, in place of the
 * {@code spark-protobuf} connector's {@code from_protobuf}.
 *
 * <p>{@code message} has the type {@code workbench.schemas.sparktypes.spark_schema} gives the
 * message (Spark's {@code from_protobuf} type with the workbench's options: wrappers unwrapped,
 * Any, Struct, Value and ListValue as JSON text, recursion to {@code maxDepth}); see
 * {@link ProtoMessageCodec} and {@link ProtoFieldCodec} for the mapping. Exactly one of
 * {@code message} and {@code error} is set. {@code call} never throws: a null record, bytes
 * that do not parse, or a record whose {@code requiredField} is unset all give an error text
 * (for a dead-letter output) and a null message.
 *
 * <p>Unset fields read as {@code from_protobuf} reads them: repeated fields and maps empty, a
 * field with a declared (proto2) default that default, anything else null; {@code emitDefaults}
 * adds what Spark's {@code emit.default.values} adds and Dagger's generated getters give: an
 * unset proto3 scalar (no presence) is its default (0, "", false, the enum's first value).
 * Fields with presence (messages, {@code optional}, oneof members) stay null.
 *
 * <p>The descriptors and codecs are built once per JVM for each (descriptor set, message,
 * options), not once per task: the instance Spark ships to executors carries only the bytes.
 */
public final class ProtoDecode implements UDF1<byte[], Row>, Serializable {
    private static final long serialVersionUID = 1L;
    private static final Map<String, Plan> PLANS = new ConcurrentHashMap<>();

    private final byte[] fileDescriptorSet;
    private final String messageFullName;
    private final String requiredField;
    private final boolean emitDefaults;
    private final int maxDepth;
    private final String fields;
    private final String planKey;
    private transient volatile Plan plan;

    /** A decoder of every field of the message; see the six-argument constructor. */
    public ProtoDecode(byte[] fileDescriptorSet, String messageFullName, String requiredField,
            boolean emitDefaults, int maxDepth) {
        this(fileDescriptorSet, messageFullName, requiredField, emitDefaults, maxDepth, null);
    }

    /**
     * @param fileDescriptorSet a serialized FileDescriptorSet holding the message and its imports
     * @param messageFullName the message's full proto name ({@code esb.booking.BookingLogMessage})
     * @param requiredField a top-level field that must be set (the event time), or null
     * @param emitDefaults unset proto3 scalars as their defaults rather than null
     * @param maxDepth how many times a message may hold itself along a path (1 to 10)
     * @param fields the top-level fields to decode, comma-separated, or null for all: the
     *     message struct then has only their columns (in the message's order), and the other
     *     fields are skipped on the wire, framed but not read
     * @throws IllegalArgumentException when the message or a field is not found
     */
    public ProtoDecode(byte[] fileDescriptorSet, String messageFullName, String requiredField,
            boolean emitDefaults, int maxDepth, String fields) {
        if (fileDescriptorSet == null || messageFullName == null) {
            throw new IllegalArgumentException("a descriptor set and a message name are needed");
        }
        this.fileDescriptorSet = fileDescriptorSet.clone();
        this.messageFullName = messageFullName;
        this.requiredField = requiredField;
        this.emitDefaults = emitDefaults;
        this.maxDepth = maxDepth;
        this.fields = fields;
        this.planKey = digest(fileDescriptorSet) + "\n" + messageFullName + "\n" + requiredField
                + "\n" + emitDefaults + "\n" + maxDepth + "\n" + fields;
        this.plan = plan(); // fail here, on the driver, rather than in every task
    }

    /**
     * This decoder as a UDF marked nondeterministic, so that the optimizer never copies the call
     * (e.g. into a pushed-down {@code error IS NULL} filter and the projection), decoding twice.
     */
    public UserDefinedFunction asUdf(DataType returnType) {
        return functions.udf(this, returnType).asNondeterministic();
    }

    @Override
    public Row call(byte[] record) {
        if (record == null) {
            return failed("empty record");
        }
        try {
            Plan p = plan();
            Object[] state = p.codec.newState();
            p.codec.decode(new WireInput(record), state, 0, 0);
            if (p.requiredColumn >= 0 && p.codec.isUnset(state, p.requiredColumn)) {
                return failed("missing event time field '" + requiredField + "'");
            }
            return new GenericRow(new Object[] {p.codec.finish(state), null});
        } catch (DecodeFailure e) {
            return failed("cannot decode " + messageFullName + ": " + e.getMessage());
        } catch (RuntimeException | StackOverflowError e) {
            return failed("cannot decode " + messageFullName + ": " + e);
        }
    }

    private static Row failed(String error) {
        return new GenericRow(new Object[] {null, error});
    }

    private Plan plan() {
        Plan p = plan;
        if (p == null) {
            p = PLANS.computeIfAbsent(planKey, k -> new Plan(
                    ProtoDescriptors.all(fileDescriptorSet), messageFullName, requiredField,
                    emitDefaults, maxDepth, fields));
            plan = p;
        }
        return p;
    }

    private static String digest(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** What decoding one message type needs: its codec and the required field's column. */
    private static final class Plan {
        final ProtoMessageCodec codec;
        final int requiredColumn;

        Plan(Map<String, Descriptor> all, String fullName, String requiredField,
                boolean emitDefaults, int maxDepth, String fields) {
            Descriptor descriptor = all.get(fullName);
            if (descriptor == null) {
                throw new IllegalArgumentException("No message " + fullName
                        + " in the descriptor set; known: "
                        + String.join(", ", new java.util.TreeSet<>(all.keySet())));
            }
            java.util.Set<String> keep = null;
            if (fields != null) {
                keep = new java.util.TreeSet<>(java.util.Arrays.asList(fields.split(",")));
                if (requiredField != null) {
                    keep.add(requiredField);
                }
                for (String name : keep) {
                    if (descriptor.findFieldByName(name) == null) {
                        throw new IllegalArgumentException("Message " + descriptor.getFullName()
                                + " has no field '" + name + "' to decode");
                    }
                }
            }
            this.codec = ProtoMessageCodec.of(descriptor, emitDefaults, maxDepth,
                    new AnyTypes(all, maxDepth), keep);
            this.requiredColumn = requiredField == null ? -1 : codec.columnOf(requiredField);
            if (requiredField != null && requiredColumn < 0) {
                throw new IllegalArgumentException("Message " + descriptor.getFullName()
                        + " has no field '" + requiredField + "' (with a column) to require");
            }
        }
    }

    /** The codecs of messages packed in an Any, by type URL (the name after its last '/'),
     * built on first use; unset fields read as unset (protobuf's JSON leaves them out). */
    private static final class AnyTypes implements ProtoJson.TypeLookup {
        private final Map<String, Descriptor> all;
        private final int maxDepth;
        private final Map<String, java.util.Optional<ProtoMessageCodec>> codecs =
                new ConcurrentHashMap<>();

        AnyTypes(Map<String, Descriptor> all, int maxDepth) {
            this.all = all;
            this.maxDepth = maxDepth;
        }

        @Override
        public ProtoMessageCodec codec(String typeUrl) {
            return codecs.computeIfAbsent(typeUrl, url -> {
                Descriptor d = all.get(url.substring(url.lastIndexOf('/') + 1));
                return d == null ? java.util.Optional.<ProtoMessageCodec>empty()
                        : java.util.Optional.of(ProtoMessageCodec.of(d, false, maxDepth, this));
            }).orElse(null);
        }
    }
}
