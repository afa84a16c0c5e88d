package io.daggerworkbench.udf;

import com.google.common.geometry.S2CellId;
import org.apache.spark.sql.api.java.UDF3;

/**
 * {@code S2Token(lat DOUBLE, lng DOUBLE, level INT) -> STRING}: the token (hex id without
 * trailing zeros) of the level-{@code level} S2 cell holding the point, as map tools expect.
 * Null when an argument is null or the level is outside 0..30.
 */
public final class S2Token implements UDF3<Object, Object, Object, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String call(Object lat, Object lng, Object level) {
        S2CellId cell = Args.cell(lat, lng, level);
        return cell == null ? null : cell.toToken();
    }
}
