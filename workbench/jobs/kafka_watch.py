"""Automatic Kafka failover: the supervisor watches every Kafka cluster that names a
``standby`` and fails the jobs reading it over once it has not answered for
``failover_after_s``.

A thread asks each such cluster its id (:func:`workbench.kafka.identity.describe`) every
few seconds and remembers since when it has not answered. Only "no answer" counts: a
secret that cannot be resolved, or options the client refuses, are said in the service's
log and never move a job. The supervisor's tick (:meth:`KafkaWatch.tick`) fails over,
as the actor ``supervisor``, every job that should be running and whose current version
reads a cluster down for longer than its ``failover_after_s``
(:func:`workbench.jobs.failover.fail_over`: a new version on the standby; the supervisor
then stops the old run, at once since its micro-batch waits on the cluster that is gone,
and starts the new one). A cluster that answers again is
forgotten; jobs already on the standby stay there (failing back is a person's decision:
``workbench jobs failover JOB --kafka-cluster ORIGINAL``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy.orm import Session

from workbench import secrets
from workbench.exceptions import KafkaUnreachableError, WorkbenchError
from workbench.jobs import failover
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, each_job
from workbench.kafka.identity import describe

LOG = logging.getLogger("workbench.jobs.kafka_watch")
ACTOR = "supervisor"


def answers(bootstrap: str, options: dict[str, str], timeout_s: float) -> bool | None:
    """True: the cluster answers; False: no answer; None: it cannot be asked from here
    (a secret or an option), which is not a reason to fail over."""

    try:
        describe(bootstrap, secrets.resolve(options), timeout_s)
    except KafkaUnreachableError:
        return False
    except WorkbenchError as err:
        LOG.warning("cannot ask Kafka at %s: %s", bootstrap, err)
        return None
    return True


class KafkaWatch:
    def __init__(
        self,
        config: ServiceConfig,
        db: Database,
        ask: Callable[[str, dict[str, str], float], bool | None] = answers,
    ):
        self.config, self.db, self._ask = config, db, ask
        self.down_since: dict[str, float] = {}  # cluster name -> monotonic time
        self._read: dict[tuple[int, int], list[str]] = {}  # (job, version) -> clusters
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def watched(self) -> dict[str, float]:
        """The clusters with a standby, and how often each is asked (seconds)."""
        return {
            name: min(max(cluster.failover_after_s / 4, 0.5), 10.0)
            for name, cluster in self.config.kafka_clusters.items()
            if cluster.standby
        }

    def start(self) -> None:
        if self.watched and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="kafka-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        every = min(self.watched.values())
        while not self._stop.is_set():
            self.ask_all()
            self._stop.wait(every)

    def ask_all(self) -> None:
        """Ask each watched cluster once; remember since when it has not answered."""
        for name, every in self.watched.items():
            cluster = self.config.kafka_clusters[name]
            answer = self._ask(cluster.bootstrap_servers, dict(cluster.security), every)
            if answer is False:
                self.down_since.setdefault(name, time.monotonic())
            elif answer is True:
                self.down_since.pop(name, None)

    def down(self) -> dict[str, float]:
        """The clusters down for longer than their ``failover_after_s``: seconds down."""
        now = time.monotonic()
        clusters = self.config.kafka_clusters
        return {
            name: now - since
            for name, since in list(self.down_since.items())
            if now - since >= clusters[name].failover_after_s
        }

    def tick(self) -> None:
        """Fail over the jobs reading a cluster that is down for long enough."""
        down = self.down()
        if not down:
            return
        each_job(self.db, lambda s, job: self._fail_over(s, job, down), "kafka failover")

    def _fail_over(self, s: Session, job: Job, down: dict[str, float]) -> None:

        if job.desired != "running" or not job.current_version:
            return
        for cluster in self._clusters_of(s, job):
            if cluster in down:
                standby = self.config.kafka_clusters[cluster].standby
                why = f"Kafka cluster '{cluster}' unreachable for {down[cluster]:.0f}s"
                failover.fail_over(s, job, self.config, str(standby), ACTOR, why)
                _stop_now(s, job)
                return

    def _clusters_of(self, s: Session, job: Job) -> list[str]:
        """The Kafka clusters the job's current version reads (remembered per version)."""
        from workbench.jobs import versioning

        key = (job.id, job.current_version)
        if key not in self._read:
            current = versioning.version(s, job.id, job.current_version)
            spec = versioning.parse_spec(current.spec_yaml) if current else None
            self._read[key] = [st.cluster for st in spec.streams] if spec else []
        return self._read[key]


def _stop_now(s: Session, job: Job) -> None:
    """The old run's micro-batch waits on a cluster that is gone and cannot finish: it is
    told to stop now (:func:`workbench.jobs.failover.stop_now`)."""
    failover.stop_now(s, job, ACTOR, "its Kafka cluster is gone")
