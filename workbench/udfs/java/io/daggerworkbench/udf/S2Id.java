package io.daggerworkbench.udf;

import com.google.common.geometry.S2CellId;
import org.apache.spark.sql.api.java.UDF3;

/**
 * {@code S2Id(lat DOUBLE, lng DOUBLE, level INT) -> STRING}: the id of the level-{@code level}
 * S2 cell holding the point, as Dagger writes it: the signed 64-bit id in decimal (cells on
 * faces 4 and 5 are negative). Null when an argument is null or the level is outside 0..30.
 */
public final class S2Id implements UDF3<Object, Object, Object, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String call(Object lat, Object lng, Object level) {
        S2CellId cell = Args.cell(lat, lng, level);
        return cell == null ? null : Long.toString(cell.id());
    }
}
