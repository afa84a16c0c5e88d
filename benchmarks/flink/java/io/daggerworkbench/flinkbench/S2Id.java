package io.daggerworkbench.flinkbench;

import com.google.common.geometry.S2CellId;
import com.google.common.geometry.S2LatLng;
import org.apache.flink.table.functions.ScalarFunction;

/**
 * {@code S2Id(lat DOUBLE, lng DOUBLE, level INT) -> STRING} for Flink SQL: the signed 64-bit id
 * of the level-{@code level} S2 cell holding the point, in decimal, as the workbench's Spark UDF
 * (and Dagger) write it. Null when an argument is null or not finite, or the level is outside
 * 0..30. The same S2 library (com.google.geometry:s2-geometry) as the Spark UDF.
 */
public final class S2Id extends ScalarFunction {
    public String eval(Double lat, Double lng, Integer level) {
        if (lat == null || lng == null || level == null) {
            return null;
        }
        if (!Double.isFinite(lat) || !Double.isFinite(lng)) {
            return null;
        }
        if (level < 0 || level > S2CellId.MAX_LEVEL) {
            return null;
        }
        return Long.toString(S2CellId.fromLatLng(S2LatLng.fromDegrees(lat, lng)).parent(level).id());
    }
}
