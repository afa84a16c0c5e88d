"""The Flink anchor's classpath: Flink from Maven Central plus one jar built here.

:func:`classpath` fetches Flink 2.2 (clients, the table planner and runtime, the Kafka
connector, the protobuf and CSV formats, the file system connector) with
:func:`workbench.runtime.maven.fetch`, and builds the anchor jar: the Java classes protoc
generates from the bundled ``booking.proto`` (the ``protobuf.message-class-name`` Flink's
protobuf format needs), the S2Id and DistinctCount UDFs and the SurgeJob main under
``benchmarks/flink/java``, compiled with ``javac`` against the fetched jars.

grpcio-tools' protoc has no Java generator, so protoc comes from Maven Central too
(``com.google.protobuf:protoc``, the executable for this platform), at the workbench UDF
jar's protobuf-java version (:data:`workbench.runtime.udf_jar.PROTOBUF`). Generated Java checks at
class load that the protobuf-java runtime is at least as new as protoc, so the runtime is
pinned to that version, over the 4.32.1 flink-protobuf 2.2.0 asks for (the 4.x API holds).

The jar's name carries a hash of its inputs (sources, proto, protoc, classpath), so it is
built once under ``$WORKBENCH_HOME/jars/flink-anchor`` and again only when one changes.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from workbench.exceptions import SetupError
from workbench.paths import subdir
from workbench.runtime.maven import fetch
from workbench.runtime.udf_jar import PROTOBUF
from workbench.schemas.compiler import well_known_include
from workbench.schemas.registry import BUNDLED_PROTOS

FLINK = "2.2.0"
KAFKA_CONNECTOR = "5.0.0-2.2"  # the newest flink-connector-kafka; it is built for Flink 2.2
S2_GEOMETRY = "com.google.geometry:s2-geometry:2.0.0"  # what the Spark S2Id UDF uses
MODULES = (
    "flink-clients",
    "flink-table-api-java",
    "flink-table-planner-loader",
    "flink-table-runtime",
    "flink-connector-base",
    "flink-connector-files",
    "flink-csv",
    "flink-protobuf",
)
JAVA_SOURCES = Path(__file__).resolve().parent / "flink" / "java"
MAIN = "io.daggerworkbench.flinkbench.SurgeJob"


def proto_file() -> tuple[Path, str]:
    """(include root, path of booking.proto under it)."""
    found = sorted(BUNDLED_PROTOS.rglob("booking.proto"))
    if not found:
        raise SetupError(f"No booking.proto under {BUNDLED_PROTOS}: reinstall dagger-workbench.")
    return BUNDLED_PROTOS, found[0].relative_to(BUNDLED_PROTOS).as_posix()


def protoc(version: str) -> Path:
    """protoc ``version`` for this platform from Maven Central, fetched once."""
    folder = subdir("jars") / f"protoc-{version}"
    exe = folder / f"protoc-{version}-{_platform()}.exe"
    if not exe.exists():
        artifact = f"com.google.protobuf:protoc:{version}:exe:{_platform()}"
        cmd = ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={artifact}"]
        _run([*cmd, f"-DoutputDirectory={folder}"], f"fetching {artifact} (mvn)")
    exe.chmod(0o755)
    return exe


def _platform() -> str:
    machine = platform.machine().lower()
    return "linux-" + {"amd64": "x86_64", "arm64": "aarch_64", "aarch64": "aarch_64"}.get(
        machine, machine
    )


def coordinates(protobuf_java: str) -> list[str]:
    flink = [f"org.apache.flink:{module}:{FLINK}" for module in MODULES]
    return [
        *flink,
        f"org.apache.flink:flink-connector-kafka:{KAFKA_CONNECTOR}",
        S2_GEOMETRY,
        f"com.google.protobuf:protobuf-java:{protobuf_java}",
    ]


def classpath() -> list[Path]:
    """[the anchor jar, Flink's jars and their dependencies], built or fetched when missing."""
    protobuf_java = PROTOBUF.rsplit(":", 1)[1]
    libraries = fetch(f"flink-{FLINK}-pb{protobuf_java}", coordinates(protobuf_java))
    return [anchor_jar(libraries, protobuf_java), *libraries]


def anchor_jar(libraries: list[Path], protobuf_java: str) -> Path:
    sources = sorted(JAVA_SOURCES.rglob("*.java"))
    root, proto = proto_file()
    folder = subdir("jars") / "flink-anchor"
    folder.mkdir(parents=True, exist_ok=True)
    digest = _digest([*sources, root / proto], libraries, protobuf_java)
    target = folder / f"flink-anchor-{digest}.jar"
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        generated, classes = Path(tmp) / "generated", Path(tmp) / "classes"
        generated.mkdir()
        includes = [f"-I{root}", f"-I{well_known_include()}"]
        _run([str(protoc(protobuf_java)), *includes, f"--java_out={generated}", proto], "protoc")
        java = [*sorted(generated.rglob("*.java")), *sources]
        _javac(java, classes, libraries)
        os.replace(_package(classes, Path(tmp) / target.name), target)
    return target


def _digest(files: list[Path], libraries: list[Path], protobuf_java: str) -> str:
    h = hashlib.sha256(protobuf_java.encode())
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(repr(sorted(p.name for p in libraries)).encode())
    return h.hexdigest()[:12]


def _javac(sources: list[Path], out: Path, libraries: list[Path]) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise SetupError("The Flink anchor needs 'javac' (JDK 17+): apt-get install default-jdk.")
    cp = os.pathsep.join(map(str, libraries))
    cmd = [javac, "--release", "17", "-proc:none", "-nowarn", "-d", str(out), "-cp", cp]
    _run([*cmd, *map(str, sources)], "javac (the Flink anchor)")


def _run(cmd: list[str], what: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SetupError(f"{what} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout + proc.stderr


def _package(classes: Path, jar: Path) -> Path:
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(classes.rglob("*.class")):
            zf.write(path, path.relative_to(classes).as_posix())
    return jar
