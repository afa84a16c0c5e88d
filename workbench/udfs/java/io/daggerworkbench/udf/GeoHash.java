package io.daggerworkbench.udf;

import org.apache.spark.sql.api.java.UDF3;

/**
 * {@code GeoHash(lat DOUBLE, lng DOUBLE, length INT) -> STRING}: the standard base32 geohash of
 * the point with {@code length} characters (1..12), as Dagger's geohash library computes it: the
 * longitude is first wrapped into -180..180 (190 is -170). Null when an argument is null, the
 * latitude is outside -90..90 or the length is outside 1..12.
 */
public final class GeoHash implements UDF3<Object, Object, Object, String> {
    private static final long serialVersionUID = 1L;
    private static final char[] BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz".toCharArray();
    private static final int MAX_LENGTH = 12;

    @Override
    public String call(Object lat, Object lng, Object length) {
        Double la = Args.toDouble(lat);
        Double ln = Args.toDouble(lng);
        Integer n = Args.toInt(length, 1, MAX_LENGTH);
        if (la == null || ln == null || n == null || Math.abs(la) > 90) {
            return null;
        }
        return encode(la, wrap(ln), n);
    }

    /** The longitude in -180..180; 180 and -180 stay as they are. */
    static double wrap(double lng) {
        if (lng < 0) {
            return -wrap(-lng);
        }
        return lng <= 180 ? lng : lng - Math.floor((lng + 180) / 360) * 360;
    }

    /** Bits alternate longitude, latitude (longitude first), five to a character. */
    static String encode(double lat, double lng, int length) {
        double[] lats = {-90, 90};
        double[] lngs = {-180, 180};
        char[] out = new char[length];
        for (int bit = 0; bit < 5 * length; bit++) {
            double[] range = bit % 2 == 0 ? lngs : lats;
            double value = bit % 2 == 0 ? lng : lat;
            double mid = (range[0] + range[1]) / 2;
            int on = value >= mid ? 1 : 0;
            range[1 - on] = mid;
            out[bit / 5] = (char) ((out[bit / 5] << 1) | on);
        }
        for (int i = 0; i < length; i++) {
            out[i] = BASE32[out[i]];
        }
        return new String(out);
    }
}
