package io.daggerworkbench.udf;

import com.jayway.jsonpath.Configuration;
import com.jayway.jsonpath.JsonPath;
import com.jayway.jsonpath.Option;
import com.jayway.jsonpath.spi.json.JacksonJsonNodeJsonProvider;
import com.jayway.jsonpath.spi.mapper.JacksonMappingProvider;
import com.fasterxml.jackson.databind.JsonNode;
import org.apache.spark.sql.api.java.UDF2;

/**
 * {@code JsonQuery(json STRING, path STRING) -> STRING}: the node a JSONPath selects
 * (Jayway JsonPath, as Dagger uses), written back as JSON: an object as {@code {"k":"v"}}, a
 * string with its quotes. A JSON null or a missing leaf gives NULL. Where Dagger throws (a
 * missing intermediate node, malformed JSON or path) this returns NULL, so one odd event
 * cannot stop a job.
 */
public final class JsonQuery implements UDF2<String, String, String> {
    private static final long serialVersionUID = 1L;
    private static final Configuration CONF = Configuration.builder()
            .jsonProvider(new JacksonJsonNodeJsonProvider())
            .mappingProvider(new JacksonMappingProvider())
            .options(Option.DEFAULT_PATH_LEAF_TO_NULL)
            .build();

    @Override
    public String call(String json, String path) {
        if (json == null || path == null || json.isEmpty() || path.isEmpty()) {
            return null;
        }
        try {
            JsonNode node = JsonPath.using(CONF).parse(json).read(path);
            return node == null || node.isNull() || node.isMissingNode() ? null : node.toString();
        } catch (RuntimeException e) {
            return null;
        }
    }
}
