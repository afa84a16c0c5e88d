package io.daggerworkbench.udf;

import org.apache.spark.sql.api.java.UDF2;

/**
 * {@code Split(text STRING, delimiter STRING) -> ARRAY<STRING>} with Dagger's semantics, which
 * are Java's {@code String.split}: the delimiter is a regular expression, trailing empty
 * strings are dropped, an empty delimiter means a single space, and a null argument gives an
 * empty array.
 */
public final class Split implements UDF2<String, String, String[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public String[] call(String text, String delimiter) {
        if (text == null || delimiter == null) {
            return new String[0];
        }
        return text.split(delimiter.isEmpty() ? " " : delimiter);
    }
}
