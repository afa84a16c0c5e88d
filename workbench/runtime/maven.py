"""Fetch Maven artifacts (with their dependencies) into a project-local folder.

Resolution is Maven's own (``mvn dependency:copy-dependencies`` over a generated
pom), so transitive dependencies, exclusions and version conflicts behave as in
any Maven build. A folder is fetched once: a stamp file records what it holds, and a
lock file beside it makes processes that want the same folder at once (test workers, a
job and a notebook) fetch it one at a time, the later ones finding it fetched.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from workbench.exceptions import SetupError
from workbench.paths import subdir

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.workbench</groupId><artifactId>fetch</artifactId><version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""
_DEP = """    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>
      <exclusions>{excl}</exclusions></dependency>"""
_EXCL = "<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"

#: Jars Spark already ships in pyspark/jars: never fetch a second copy.
SPARK_PROVIDED = [
    "org.apache.hadoop:hadoop-client-api",
    "org.apache.hadoop:hadoop-client-runtime",
    "com.google.code.findbugs:jsr305",
    "org.lz4:lz4-java",
    "org.xerial.snappy:snappy-java",
    "com.github.luben:zstd-jni",
    "org.scala-lang:scala-library",
    "org.scala-lang.modules:scala-parallel-collections_2.13",
    "org.slf4j:slf4j-api",
    "org.apache.spark:spark-tags_2.13",
]


def _dependency(coordinate: str, exclude: Sequence[str]) -> str:
    parts = coordinate.split(":")
    if len(parts) != 3:
        raise SetupError(f"Maven coordinate '{coordinate}' must be group:artifact:version.")
    pairs = [e.split(":") for e in exclude]
    excl = "".join(_EXCL.format(g=escape(g), a=escape(a)) for g, a in pairs)
    g, a, v = (escape(p) for p in parts)
    return _DEP.format(g=g, a=a, v=v, excl=excl)


def fetch(
    name: str, coordinates: Sequence[str], exclude: Sequence[str] = (), transitive: bool = True
) -> list[Path]:
    """Jars of ``coordinates`` (and, if ``transitive``, their runtime dependencies).

    ``exclude`` lists ``group:artifact`` pairs left out everywhere (e.g. jars Spark ships).
    Returns the jar paths in ``<home>/jars/<name>``; fetches only when missing or changed.
    """
    folder = subdir("jars") / name
    key = hashlib.sha256(repr((list(coordinates), list(exclude), transitive)).encode()).hexdigest()
    stamp = folder / ".fetched"
    if stamp.exists() and stamp.read_text() == key:
        return sorted(folder.glob("*.jar"))
    with open(folder.with_name(f".{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stamp.exists() and stamp.read_text() == key:  # another process fetched it
            return sorted(folder.glob("*.jar"))
        return _fetch(folder, stamp, key, coordinates, exclude, transitive)


def _fetch(
    folder: Path,
    stamp: Path,
    key: str,
    coordinates: Sequence[str],
    exclude: Sequence[str],
    transitive: bool,
) -> list[Path]:
    if shutil.which("mvn") is None:
        raise SetupError("Maven ('mvn') is needed to fetch jars: apt-get install maven.")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    pom = folder / "pom.xml"
    excludes = list(exclude) if transitive else ["*:*"]
    pom.write_text(_POM.format(deps="\n".join(_dependency(c, excludes) for c in coordinates)))
    cmd = [
        "mvn",
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={folder}",
        "-DincludeScope=runtime",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise SetupError(
            f"Could not fetch {', '.join(coordinates)} from Maven:\n" + "\n".join(tail)
        )
    pom.unlink()
    stamp.write_text(key)
    return sorted(folder.glob("*.jar"))
