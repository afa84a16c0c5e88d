package io.daggerworkbench.udf;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.api.java.UDF1;

/**
 * {@code workbench_json_text(text STRING) -> STRING}: JSON text written the way the protobuf
 * decoder writes {@code Struct}, {@code Value}, {@code ListValue} and {@code Any} fields
 * ({@link ProtoJson}): compact, keys sorted ({@link ProtoJson#KEYS}; a repeated key keeps its
 * last value), every number as a double would print. So a recording's JSON field reads
 * exactly as the decoded Kafka record would. Text that is not JSON is taken as a JSON string
 * (a recording's {@code "note": "hello"} for a {@code Value} gives {@code "hello"}).
 */
public final class JsonText implements UDF1<String, String> {
    private static final long serialVersionUID = 1L;
    /** NaN and Infinity allowed, as Spark's JSON reader allows them in a recording. */
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    @Override
    public String call(String text) {
        if (text == null) {
            return null;
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            return ProtoJson.quote(text);
        }
        if (node == null || node.isMissingNode()) {
            return ProtoJson.quote(text);
        }
        StringBuilder out = new StringBuilder(text.length());
        write(node, out);
        return out.toString();
    }

    private static void write(JsonNode node, StringBuilder out) {
        if (node.isObject()) {
            Map<String, JsonNode> sorted = new TreeMap<>(ProtoJson.KEYS);
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                sorted.put(e.getKey(), e.getValue());
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, JsonNode> e : sorted.entrySet()) {
                out.append(first ? "" : ",").append(ProtoJson.quote(e.getKey())).append(':');
                write(e.getValue(), out);
                first = false;
            }
            out.append('}');
        } else if (node.isArray()) {
            out.append('[');
            for (int i = 0; i < node.size(); i++) {
                out.append(i == 0 ? "" : ",");
                write(node.get(i), out);
            }
            out.append(']');
        } else if (node.isNumber()) {
            out.append(ProtoJson.number(node.doubleValue()));
        } else if (node.isTextual()) {
            out.append(ProtoJson.quote(node.textValue()));
        } else if (node.isBoolean()) {
            out.append(node.booleanValue());
        } else {
            out.append("null");
        }
    }
}
