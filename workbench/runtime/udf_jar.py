"""The workbench UDF jar: the Java sources under ``udfs/java``, compiled on first use.

:func:`udf_jars` is a jar provider for :mod:`workbench.runtime.spark`: it fetches the libraries
the UDFs use (Google's S2, Jayway JsonPath, protobuf-java), compiles the sources with
``javac`` against them and pyspark's bundled jars, and returns the UDF jar and the
libraries. The jar's name carries a hash of its inputs, so it is rebuilt only when a
source changes; it is built in a temporary folder and renamed into place, so processes
racing to build it never see a half-written jar.

:func:`local_files_jar` builds the sources under ``udfs/java-fs`` (the local file system
class Hadoop loads, which must sit on the JVMs' own class path) into a jar of their own the
same way.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.paths import PACKAGE_DIR, subdir
from workbench.runtime.maven import fetch

JAVA_SOURCES = PACKAGE_DIR / "udfs" / "java"
#: The local file system class, apart from the UDFs (:func:`local_files_jar`).
LOCAL_FS_SOURCES = PACKAGE_DIR / "udfs" / "java-fs"
S2_GEOMETRY = "com.google.geometry:s2-geometry:2.0.0"
JSON_PATH = "com.jayway.jsonpath:json-path:2.9.0"  # what Dagger's JsonQuery uses
#: ProtoDecode's descriptors; pyspark/jars holds only shaded copies (orc), so none clashes.
PROTOBUF = "com.google.protobuf:protobuf-java:4.33.5"
#: Spark ships these (guava for s2-geometry; slf4j for json-path) in pyspark/jars.
SPARK_PROVIDED = ["com.google.guava:guava", "org.slf4j:slf4j-api"]
_MANIFEST = "Manifest-Version: 1.0\nCreated-By: dagger-workbench\n\n"


def udf_jars() -> list[Path]:
    """[the workbench UDF jar, its libraries]: what ``spark.jars`` needs for the JVM UDFs."""
    libraries = fetch("udf-libs", [S2_GEOMETRY, JSON_PATH, PROTOBUF], exclude=SPARK_PROVIDED)
    return [udf_jar(libraries), *libraries]


def udf_jar(classpath: list[Path]) -> Path:
    """The compiled UDF jar, built against ``classpath`` plus pyspark's jars if missing."""
    return _jar(JAVA_SOURCES, "workbench-udfs", classpath)


def local_files_jar() -> Path:
    """The jar of ``io.daggerworkbench.fs.NioLocalFileSystem`` alone (it needs Hadoop only):
    :mod:`workbench.runtime.spark` puts it on the JVMs' own class path, where Hadoop finds the file
    system classes it loads, beside none of the UDFs' libraries."""
    return _jar(LOCAL_FS_SOURCES, "workbench-localfs", [])


def _jar(root: Path, name: str, classpath: list[Path]) -> Path:
    """The jar of the Java sources under ``root``, compiled once per content."""
    sources = sorted(root.rglob("*.java"))
    if not sources:
        raise SetupError(f"No Java sources under {root}: reinstall dagger-workbench.")
    folder = subdir("jars") / "udfs"
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()  # the real path: a class archive fits a class path by its names
    target = folder / f"{name}-{_digest(root, sources, classpath)}.jar"
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        classes = Path(tmp) / "classes"
        _compile(root, sources, classes, [*classpath, _spark_jars() / "*"])
        built = _package(classes, Path(tmp) / target.name)
        os.replace(built, target)
    return target


def _digest(root: Path, sources: list[Path], classpath: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sources:
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(repr(sorted(p.name for p in classpath)).encode())
    h.update(_spark_version().encode())  # compiled against pyspark's jars
    return h.hexdigest()[:12]


def _spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def _spark_jars() -> Path:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir():
        raise SetupError(f"pyspark has no bundled jars at {jars}: reinstall pyspark (pip).")
    return jars


def _compile(root: Path, sources: list[Path], out: Path, classpath: list[Path]) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise SetupError(
            "A Java compiler ('javac', JDK 17+) is needed to build the UDF jar: "
            "install a JDK (apt-get install openjdk-17-jdk-headless)."
        )
    cmd = [
        javac,
        "--release",
        "17",
        "-proc:none",
        "-nowarn",
        "-encoding",
        "UTF-8",
        "-d",
        str(out),
        "-cp",
        os.pathsep.join(map(str, classpath)),
        *map(str, sources),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SetupError(
            "Compiling the workbench UDFs failed; fix the Java sources under "
            f"{root} (javac output below):\n{proc.stdout}{proc.stderr}"
        )


def _package(classes: Path, jar: Path) -> Path:
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("META-INF/MANIFEST.MF", _MANIFEST)
        for path in sorted(classes.rglob("*.class")):
            zf.write(path, path.relative_to(classes).as_posix())
    return jar
