"""Load: drive a topic at a target rate with the seeded generator, and watch a dagger keep up.

:func:`drive` publishes ``rate × duration`` events of one message (Poisson arrivals paced
to the wall clock by :func:`workbench.dev.producer.publish`), so what was produced is an exact,
reproducible number (the chaos ledger counts on it). With ``malformed`` a seeded fraction
of them are undecodable bytes (the dagger's dead letters), each with its event time as
its Kafka timestamp, so the ledger can window them. It samples the sent count once per
chunk and, given a job, the job's metrics from the job service once a second (a thread):
``sustained`` is the job's decoded records over the run divided by its wall seconds,
and ``lag`` its ``offsets_behind_latest`` at the end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from workbench.dev.generator import MESSAGES
from workbench.exceptions import ChaosError
from workbench.kafka.admin import create_topics

#: what ``--message`` accepts besides an event kind: its message name
KINDS_BY_MESSAGE = {message: kind for kind, message in MESSAGES.items()}


def kind_of(message: str) -> str:
    """The generator's event kind for ``message`` (a kind or a protobuf message name)."""
    if message in MESSAGES:
        return message
    if message in KINDS_BY_MESSAGE:
        return KINDS_BY_MESSAGE[message]
    known = ", ".join(f"{k} ({m})" for k, m in sorted(MESSAGES.items()))
    raise ChaosError(f"The load generator has no message '{message}'. It makes: {known}.")


@dataclass(frozen=True)
class LoadPlan:
    """A load: ``rate`` events per second of ``message`` on ``topic`` for ``duration_s``."""

    topic: str
    message: str
    rate: float
    duration_s: float
    seed: int = 42
    partitions: int = 3
    #: the fraction of records replaced by undecodable bytes (seeded: the ledger makes the
    #: same ones again); their Kafka timestamp is their event time
    malformed: float = 0.0

    @property
    def count(self) -> int:
        return max(1, round(self.rate * self.duration_s))


@dataclass
class LoadResult:
    """What a :func:`drive` sent (``sent``, ``malformed``, ``achieved_rate`` per wall
    second, ``samples`` of (seconds since start, sent)) and, given a job, what the job did
    (``job_samples``: seconds, records, processed_rate, offsets_behind_latest)."""

    topic: str
    kind: str
    target_rate: float
    seed: int = 42
    sent: int = 0
    malformed: int = 0
    malformed_fraction: float = 0.0
    seconds: float = 0.0
    started_at: str = ""
    samples: list[tuple[float, int]] = field(default_factory=list)
    job: str | None = None
    job_samples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def achieved_rate(self) -> float:
        return self.sent / self.seconds if self.seconds else 0.0

    @property
    def sustained(self) -> float | None:
        """The job's decoded records per wall second over the run (None without a job)."""
        if len(self.job_samples) < 2:
            return None
        first, last = self.job_samples[0], self.job_samples[-1]
        span = last["t"] - first["t"]
        return (last["records"] - first["records"]) / span if span > 0 else None

    @property
    def lag(self) -> int | None:
        return self.job_samples[-1]["offsets_behind_latest"] if self.job_samples else None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(achieved_rate=self.achieved_rate, sustained=self.sustained, lag=self.lag)
        return out


def drive(
    bootstrap: str,
    plan: LoadPlan,
    *,
    job_metrics: Callable[[], dict[str, Any]] | None = None,
    stop: Callable[[], bool] = lambda: False,
    job: str | None = None,
    create_topic: bool = True,
) -> LoadResult:
    """Publish the plan's events; ``job_metrics`` (e.g. the job service's metrics of a job)
    is sampled once a second meanwhile and once after the last event was acknowledged.
    ``create_topic=False``: the caller made the topic (a chaos case, before its fault)."""
    from workbench.dev.generator import Generator
    from workbench.dev.producer import publish

    kind = kind_of(plan.message)
    if create_topic:
        create_topics(bootstrap, {plan.topic: plan.partitions})
    result = LoadResult(plan.topic, kind, plan.rate, plan.seed, job=job)
    result.malformed_fraction = plan.malformed
    start = datetime.now(UTC)
    result.started_at = start.isoformat()  # exact: the ledger makes the same events again
    generator = Generator(
        seed=plan.seed, start=start, rate_per_s=plan.rate, malformed_fraction=plan.malformed
    )
    t0 = time.monotonic()
    watcher = _Watcher(job_metrics, t0, result.job_samples) if job_metrics else None

    def progress(out: Any) -> None:
        result.samples.append((round(time.monotonic() - t0, 3), out.sent))

    try:
        out = publish(
            bootstrap, kind, topic=plan.topic, count=plan.count, generator=generator,
            stop=stop, on_progress=progress, event_time_stamps=plan.malformed > 0,
        )  # fmt: skip
    finally:
        if watcher is not None:
            watcher.stop()
    result.seconds = time.monotonic() - t0
    result.sent, result.malformed = out.sent, out.malformed
    return result


class _Watcher:
    """Samples a job's metrics once a second in a daemon thread (and once at the end)."""

    def __init__(self, metrics: Callable[[], dict[str, Any]], t0: float, into: list):
        self.metrics, self.t0, self.into = metrics, t0, into
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-watch", daemon=True)
        self._sample()
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join(10)
        self._sample()

    def _run(self) -> None:
        while not self._done.wait(1.0):
            self._sample()

    def _sample(self) -> None:
        try:
            values = self.metrics() or {}
        except Exception:  # noqa: BLE001 - a service hiccup costs a sample, not the load
            return
        self.into.append(
            {
                "t": round(time.monotonic() - self.t0, 3),
                "records": int(values.get("records") or 0),
                "processed_rate": float(values.get("processed_rate") or 0.0),
                "offsets_behind_latest": int(values.get("offsets_behind_latest") or 0),
            }
        )
