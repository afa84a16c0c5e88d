package io.daggerworkbench.udf;

import com.google.common.geometry.S2Cell;
import com.google.common.geometry.S2CellId;
import org.apache.spark.sql.api.java.UDF1;

/**
 * {@code S2AreaInKm2(s2id STRING) -> DOUBLE}: the area of an S2 cell in square kilometres, the
 * cell's exact area on the unit sphere scaled to the Earth's 510,072,000 km2 (Dagger's formula).
 * The id is the decimal {@code S2Id} returns; the unsigned form is accepted too. Null when the
 * id is null, not a number or not a valid cell.
 */
public final class S2AreaInKm2 implements UDF1<Object, Double> {
    private static final long serialVersionUID = 1L;
    private static final double EARTH_KM2_PER_STERADIAN = 510072000 / (4 * Math.PI);

    @Override
    public Double call(Object s2id) {
        S2CellId id = Args.cellId(s2id);
        return id == null ? null : new S2Cell(id).exactArea() * EARTH_KM2_PER_STERADIAN;
    }
}
