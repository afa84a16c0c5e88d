package io.daggerworkbench.udf;

import com.google.common.geometry.S2CellId;
import com.google.common.geometry.S2LatLng;

/**
 * Argument handling shared by the geo UDFs.
 *
 * <p>Spark hands a Java UDF registered from Python its arguments without casting them, so a
 * {@code DOUBLE} parameter may arrive as a Double, an Integer or a BigDecimal (SQL literals such
 * as {@code -6.17} are DECIMAL). Every UDF therefore takes {@code Object}s and converts them here.
 * A null, non-finite or out-of-range argument becomes null, and the UDF then returns null; an
 * argument that is not a number at all (a string, say) is an error naming the fix.
 */
final class Args {
    private Args() {}

    /** {@code value} as a finite double, or null. */
    static Double toDouble(Object value) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof Number)) {
            throw new IllegalArgumentException("expected a number, got " + value.getClass()
                    .getSimpleName() + " '" + value + "': CAST the argument to DOUBLE or INT");
        }
        double d = ((Number) value).doubleValue();
        return Double.isFinite(d) ? d : null;
    }

    /** {@code value} as a whole number in {@code [min, max]}, or null. */
    static Integer toInt(Object value, int min, int max) {
        Double d = toDouble(value);
        if (d == null || d != Math.rint(d) || d < min || d > max) {
            return null;
        }
        return d.intValue();
    }

    /** The level-{@code level} S2 cell holding the point, or null. */
    static S2CellId cell(Object lat, Object lng, Object level) {
        Double la = toDouble(lat);
        Double ln = toDouble(lng);
        Integer lv = toInt(level, 0, S2CellId.MAX_LEVEL);
        if (la == null || ln == null || lv == null) {
            return null;
        }
        return S2CellId.fromLatLng(S2LatLng.fromDegrees(la, ln)).parent(lv);
    }

    /** A cell id written as a signed (Dagger's form) or unsigned decimal, or null. */
    static S2CellId cellId(Object id) {
        if (id == null) {
            return null;
        }
        String text = id.toString().trim();
        try {
            long raw = text.startsWith("-") ? Long.parseLong(text) : Long.parseUnsignedLong(text);
            S2CellId cell = new S2CellId(raw);
            return cell.isValid() ? cell : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
