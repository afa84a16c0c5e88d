package io.daggerworkbench.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system ({@code file:}), setting permissions with {@code java.nio}
 * instead of a {@code chmod} process.
 *
 * <p>Without Hadoop's native library (pyspark ships none), {@link RawLocalFileSystem} runs
 * {@code chmod} in a new process for every file and folder it creates with a permission:
 * each checkpoint log entry, each state store delta file, each Parquet part file and their
 * {@code .crc} files. A micro-batch of the surge dagger started about 35 such processes, on
 * the driver between batches and in the tasks (docs/benchmarks.md, item 25). This class
 * sets the same bits through {@link Files#setPosixFilePermissions}, in the calling thread.
 * A permission with the sticky bit, or a file store without POSIX attributes, goes to
 * Hadoop's own way. The workbench's sessions use it for {@code fs.file.impl}
 * ({@code workbench.runtime.spark.DEFAULT_CONF}), from a jar of its own on the JVMs' class path
 * ({@code workbench.runtime.udf_jar.local_files_jar}): Hadoop loads it with the JVM's class loader.
 */
public final class NioLocalFileSystem extends LocalFileSystem {
    public NioLocalFileSystem() {
        super(new Raw());
    }

    /** The raw (checksum-less) file system under {@link NioLocalFileSystem}. */
    public static final class Raw extends RawLocalFileSystem {
        @Override
        public void setPermission(Path path, FsPermission permission) throws IOException {
            if (permission.getStickyBit()) {
                super.setPermission(path, permission);
                return;
            }
            try {
                Files.setPosixFilePermissions(pathToFile(path).toPath(), posix(permission));
            } catch (UnsupportedOperationException notPosix) {
                super.setPermission(path, permission);
            }
        }

        /** {@code permission}'s read, write and execute bits for user, group and others. */
        static Set<PosixFilePermission> posix(FsPermission permission) {
            Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
            add(bits, permission.getUserAction(), PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
            add(bits, permission.getGroupAction(), PosixFilePermission.GROUP_READ,
                    PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);
            add(bits, permission.getOtherAction(), PosixFilePermission.OTHERS_READ,
                    PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
            return bits;
        }

        private static void add(Set<PosixFilePermission> bits, FsAction action,
                PosixFilePermission read, PosixFilePermission write, PosixFilePermission execute) {
            if (action.implies(FsAction.READ)) {
                bits.add(read);
            }
            if (action.implies(FsAction.WRITE)) {
                bits.add(write);
            }
            if (action.implies(FsAction.EXECUTE)) {
                bits.add(execute);
            }
        }
    }
}
