"""A real Spark standalone cluster (one master, N workers) on 127.0.0.1 for a dev box.

The master and the workers run from pyspark's own jars through its ``bin/spark-class``
(``org.apache.spark.deploy.master.Master`` and ``...deploy.worker.Worker``), on free
ports. Like the dev Kafka broker (:mod:`workbench.dev.kafka`) they are detached from
Python: they outlive the process that started them, and any process can stop them through
``cluster.json`` in the state folder (default ``$WORKBENCH_HOME/spark``), which also holds
each daemon's log and each worker's work folder (executors' stdout and stderr)::

    spark/cluster.json   {port, webui_port, workers, cores, memory, pids: {...}}
    spark/master.log     spark/worker-1.log ...
    spark/worker-1/      app-.../0/stderr ...

Readiness is the master's own JSON status (``http://127.0.0.1:WEBUI/json/``) listing
every worker ``ALIVE``, not a sleep. A driver on this machine reaches it with
``master: spark://127.0.0.1:PORT`` (:attr:`ClusterStatus.master_url`); the jars of its
``spark.jars`` (Kafka connector, UDFs) are served by the driver and fetched by each
executor, so nothing is installed on the workers.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.dev.ports import HOST, free_ports, port_taken
from workbench.exceptions import SetupError
from workbench.jobs import procs
from workbench.paths import subdir
from workbench.runtime.spark import executor_java_options
from workbench.settings import child_env

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
STATE = "cluster.json"
#: heap of the master and of each worker daemon (executors get ``spark.executor.memory``)
DAEMON_MEMORY = "512m"


def spark_home() -> Path:
    """pyspark's own Spark distribution (``bin/spark-class``, ``jars/``)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


@dataclass(frozen=True)
class ClusterStatus:
    """``running``: the master's process is alive; ``alive_workers`` from its JSON status
    (0 when it does not answer)."""

    running: bool
    master_url: str
    webui_url: str
    state_dir: Path
    workers: int = 0
    alive_workers: int = 0
    pids: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "master_url": self.master_url,
            "webui_url": self.webui_url,
            "state_dir": str(self.state_dir),
            "workers": self.workers,
            "alive_workers": self.alive_workers,
            "pids": self.pids,
        }


class SparkCluster:
    """A standalone master and ``workers`` workers (``cores`` and ``memory`` each) keeping
    their state in ``state_dir``. Ports are chosen free at the first start, unless given
    (``ports``: ``master``, ``webui``, ``worker``: the first worker's, worker N taking
    ``worker + 2(N-1)`` and its web UI the next), and kept in ``cluster.json`` while the
    cluster runs."""

    def __init__(
        self,
        state_dir: Path | None = None,
        workers: int = 2,
        cores: int = 1,
        memory: str = "1g",
        ports: dict[str, int] | None = None,
    ):
        self.state_dir = Path(state_dir) if state_dir is not None else subdir("spark")
        self.workers, self.cores, self.memory = workers, cores, memory
        self.ports = {k: v for k, v in (ports or {}).items() if v}
        self._children: dict[int, subprocess.Popen[bytes]] = {}

    # -- what runs ---------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads((self.state_dir / STATE).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _live(self, state: dict[str, Any]) -> dict[str, int]:
        """The daemons of ``state`` still alive: {"master": pid, "worker-1": pid, ...}."""
        return {
            name: pid for name, pid in (state.get("pids") or {}).items() if self._alive(pid, name)
        }

    def _alive(self, pid: int, name: str) -> bool:
        child = self._children.get(pid)
        if child is not None:
            return child.poll() is None  # our own child: exact, and reaps it
        return procs.alive(pid, self._marker(name))

    def _marker(self, name: str) -> str:
        """An argument only ``name``'s command line holds (its log4j-free identity)."""
        return f"-Dworkbench.daemon={self.state_dir / name}"

    def status(self) -> ClusterStatus:
        """What runs now; asks the master for its alive workers when it is up."""
        state = self._state()
        live = self._live(state)
        port, webui = state.get("port", 0), state.get("webui_port", 0)
        alive = _alive_workers(webui) if "master" in live else 0
        return ClusterStatus(
            running="master" in live,
            master_url=f"spark://{HOST}:{port}" if port else "",
            webui_url=f"http://{HOST}:{webui}" if webui else "",
            state_dir=self.state_dir,
            workers=int(state.get("workers", 0)),
            alive_workers=alive,
            pids=live,
        )

    # -- life cycle --------------------------------------------------------------------
    def start(self, timeout: float = 90.0) -> ClusterStatus:
        """Start the master and workers (or find them running) and wait until the master
        lists every worker ALIVE."""
        state = self._state()
        live = self._live(state)
        if "master" in live:
            if int(state.get("workers", 0)) != self.workers:
                raise SetupError(
                    f"A Spark cluster with {state.get('workers')} workers already runs from "
                    f"{self.state_dir}. Stop it first (workbench dev spark down), or ask for "
                    "the same number of workers."
                )
            self._same_ports(state)
            self._wait_ready(state, timeout)
            return self.status()
        self.stop()  # a half-dead cluster: end what is left of it
        state = self._launch()
        try:
            self._wait_ready(state, timeout)
        except SetupError:
            self.stop()
            raise
        return self.status()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the workers, then the master (SIGTERM, SIGKILL after ``timeout``)."""
        live = self._live(self._state())
        order = sorted(live, key=lambda name: name == "master")  # workers first
        for name in order:
            procs.signal_group(live[name], signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for name in order:
            while self._alive(live[name], name) and time.monotonic() < deadline:
                time.sleep(0.1)
            if self._alive(live[name], name):
                procs.signal_group(live[name], signal.SIGKILL)
        (self.state_dir / STATE).unlink(missing_ok=True)

    def kill(self) -> None:
        """SIGKILL the master and every worker (and their executors), as a lost machine
        would; ``cluster.json`` stays behind."""
        live = self._live(self._state())
        for pid in live.values():
            procs.signal_group(pid, signal.SIGKILL)
        for name, pid in live.items():
            deadline = time.monotonic() + 10
            while self._alive(pid, name) and time.monotonic() < deadline:
                time.sleep(0.05)

    def _same_ports(self, state: dict[str, Any]) -> None:
        keys = {"master": "port", "webui": "webui_port"}
        for name, asked in self.ports.items():
            running = state.get(keys.get(name, ""), asked)
            if name in keys and running != asked:
                raise SetupError(
                    f"The Spark cluster in {self.state_dir} already runs with its {name} on "
                    f"port {running}, not {asked}. Stop it first (workbench dev spark down)."
                )

    def _chosen_ports(self) -> tuple[int, int, list[int]]:
        """The master's, its web UI's and each worker's two ports: those asked, the rest
        free; SetupError naming the option when an asked one is in use."""
        first = self.ports.get("worker")
        workers = [first + n if first else None for n in range(2 * self.workers)]
        asked = [("master-port", self.ports.get("master")), ("webui-port", self.ports.get("webui"))]
        asked += [("worker-port", port) for port in workers]
        for option, port in asked:
            if port and port_taken(port):
                raise SetupError(
                    f"Port {port} on {HOST} is in use: give another --{option}, or leave it "
                    "out for a free one."
                )
        free = iter(free_ports(sum(1 for _, port in asked if not port)))
        port, webui, *rest = (port or next(free) for _, port in asked)
        return port, webui, rest

    def _launch(self) -> dict[str, Any]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        port, webui, worker_ports = self._chosen_ports()
        state: dict[str, Any] = {
            "port": port, "webui_port": webui, "workers": self.workers,
            "cores": self.cores, "memory": self.memory, "pids": {},
        }  # fmt: skip
        master = ["--host", HOST, "--port", str(port), "--webui-port", str(webui)]
        state["pids"]["master"] = self._spawn("master", MASTER_CLASS, master)
        for n in range(1, self.workers + 1):
            name = f"worker-{n}"
            own, ui = worker_ports[2 * n - 2 : 2 * n]
            work = self.state_dir / name
            work.mkdir(exist_ok=True)
            args = [
                f"spark://{HOST}:{port}", "--host", HOST, "--port", str(own),
                "--webui-port", str(ui), "--cores", str(self.cores),
                "--memory", self.memory, "--work-dir", str(work),
            ]  # fmt: skip
            state["pids"][name] = self._spawn(name, WORKER_CLASS, args)
        (self.state_dir / STATE).write_text(json.dumps(state, indent=1))
        return state

    def _spawn(self, name: str, main_class: str, args: list[str]) -> int:
        home = spark_home()
        env = child_env(
            {
                "SPARK_HOME": str(home),
                "SPARK_LOCAL_IP": HOST,
                "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
                # the marker finds the daemon again by pid; UTC as the drivers use, C1 only
                # when $WORKBENCH_JIT asks (as the executors it launches)
                "SPARK_DAEMON_JAVA_OPTS": f"{self._marker(name)} {executor_java_options()}",
            }
        )
        log = self.state_dir / f"{name}.log"
        with log.open("ab") as out:
            out.write(f"--- workbench starting Spark {name} at {datetime.now()}\n".encode())
            out.flush()
            child = subprocess.Popen(
                [str(home / "bin" / "spark-class"), main_class, *args],
                env=env,
                cwd=self.state_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survives this process and its terminal's Ctrl-C
            )
        self._children[child.pid] = child
        return child.pid

    def _wait_ready(self, state: dict[str, Any], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        want = int(state.get("workers", 0))
        while time.monotonic() < deadline:
            live = self._live(state)
            gone = sorted(set(state.get("pids") or {}) - set(live))
            if gone:
                name = gone[0]
                raise SetupError(
                    f"The Spark {name} of {self.state_dir} exited while starting. The end "
                    f"of {self.state_dir / (name + '.log')}:\n{self._log_tail(name)}"
                )
            if _alive_workers(state.get("webui_port", 0)) >= want:
                return
            time.sleep(0.2)
        raise SetupError(
            f"The Spark master of {self.state_dir} did not list {want} ALIVE workers at "
            f"http://{HOST}:{state.get('webui_port')}/json/ within {timeout:.0f}s. The end of "
            f"{self.state_dir / 'master.log'}:\n{self._log_tail('master')}"
        )

    def _log_tail(self, name: str) -> str:
        return procs.log_tail(self.state_dir / f"{name}.log", lines=30) or "(empty)"


def master_json(webui_port: int, timeout: float = 2.0) -> dict[str, Any] | None:
    """The master's JSON status (``/json/``), None when it does not answer."""
    if not webui_port:
        return None
    url = f"http://{HOST}:{webui_port}/json/"
    with suppress(OSError, ValueError), urllib.request.urlopen(url, timeout=timeout) as answer:
        data = json.loads(answer.read())
        return data if isinstance(data, dict) else None
    return None


def _alive_workers(webui_port: int) -> int:
    data = master_json(webui_port)
    if not data or data.get("status") != "ALIVE":
        return 0
    return sum(1 for w in data.get("workers") or [] if w.get("state") == "ALIVE")
