"""A Flink MiniCluster in its own JVM, fed Flink SQL scripts, for the streaming benchmark.

:class:`FlinkCluster` starts ``java SurgeJob SLOTS`` (``benchmarks/flink/java``) once: one
JVM holding a MiniCluster of one TaskManager with ``slots`` slots, as a Spark session is
started once for the Spark variants. :meth:`FlinkCluster.run` hands it a script and waits
for the jobs it starts to end; the JVM stays warm between runs (JIT, loaded classes), as the
Spark driver does. :func:`read_rows` reads the CSV the surge script writes.

The JVM gets the heap of a ``local[2]`` Spark driver (``spark.driver.memory``' default 1g)
and the ``--add-opens`` Flink's own launch scripts pass on Java 17.
"""

from __future__ import annotations

import csv
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from flink_build import MAIN, classpath

from workbench.exceptions import WorkbenchError
from workbench.moments import epoch_ms
from workbench.runtime.spark import GC

TAG = "@flinkbench "
_OPENS = [
    f"--add-opens=java.base/{package}=ALL-UNNAMED"
    for package in (
        "java.lang", "java.lang.reflect", "java.io", "java.net", "java.nio", "sun.nio.ch",
        "java.text", "java.time", "java.util", "java.util.concurrent",
        "java.util.concurrent.atomic", "java.util.concurrent.locks",
    )
]  # fmt: skip
#: one surge row: (window end in epoch ms, S2 cell id, vehicle type, bookings, customers)
Row = tuple[int, str, str, int, int]


class FlinkError(WorkbenchError):
    """The Flink JVM failed or a Flink job did; the message holds its own error."""


@dataclass(frozen=True)
class Timing:
    """One script's run as the JVM measured it, in seconds."""

    total: float  # a new TableEnvironment to the end of the last job
    submit: float  # DDL, planning, code generation, up to the job's submission
    net_runtime: float  # the job's runtime as the cluster counts it


class FlinkCluster:
    """``java SurgeJob`` on a MiniCluster of ``slots`` slots; a context manager."""

    def __init__(
        self, slots: int = 2, heap: str = "1g", log: Path | None = None, collector: str = GC
    ):
        """``heap`` and ``collector`` (a JVM option, "" for the JVM's default) as a
        ``local[2]`` Spark driver has them."""
        self.slots, self.heap, self.collector = slots, heap, collector
        self.log = log or Path(os.devnull)
        self.started = 0.0  # seconds from launching the JVM to the cluster being ready
        self.minicluster = 0.0  # of which the MiniCluster's own start
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> FlinkCluster:
        jars = classpath()
        cmd = [
            "java", f"-Xmx{self.heap}", *self.collector.split(), "-Duser.timezone=UTC", *_OPENS,
            "-cp", os.pathsep.join(map(str, jars)), MAIN, str(self.slots),
        ]  # fmt: skip
        start = time.perf_counter()
        with open(self.log, "a") as log:
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
            )
        words = self._answer("ready")
        self.started = time.perf_counter() - start
        self.minicluster = int(words[0]) / 1000
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is None:
            return
        assert self._proc.stdin is not None
        self._proc.stdin.close()  # SurgeJob stops the cluster and exits at end of input
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def run(self, script: Path) -> Timing:
        """Run the statements of ``script`` to the end of its jobs."""
        assert self._proc is not None and self._proc.stdin is not None, "use it in a with block"
        self._proc.stdin.write(f"run {script}\n")
        self._proc.stdin.flush()
        total, submit, net = (int(w) / 1000 for w in self._answer("done"))
        return Timing(total, submit, net)

    def gc(self) -> None:
        """A full GC in the Flink JVM, so no garbage of a run before is collected in the next."""
        assert self._proc is not None and self._proc.stdin is not None, "use it in a with block"
        self._proc.stdin.write("gc\n")
        self._proc.stdin.flush()
        self._answer("gc")

    def _answer(self, expected: str) -> list[str]:
        """The words after ``expected`` in SurgeJob's next answer line."""
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            if not line.startswith(TAG):
                continue  # something Flink printed
            word, _, rest = line[len(TAG) :].strip().partition(" ")
            if word == expected:
                return rest.split()
            raise FlinkError(f"Flink: {rest} (JVM log: {self.log})")
        raise FlinkError(f"the Flink JVM exited with {self._proc.wait()} (log: {self.log})")


def read_rows(folder: Path) -> list[Row]:
    """The surge rows of the CSV part files under ``folder`` (hidden in-progress files out)."""
    rows: list[Row] = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.startswith((".", "_")):
            with open(path, newline="") as f:
                for s2id, vehicle, bookings, customers, end in csv.reader(f):
                    rows.append((epoch_ms(end), s2id, vehicle, int(bookings), int(customers)))
    return sorted(rows)
