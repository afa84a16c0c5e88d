"""Probes: a thread sampling the job and the broker once a second during a chaos case.

Each sample: ``t`` (seconds since the case began); from the job service, for each job of
the case's blast radius: ``status``, ``records``, ``processed_rate``, ``input_rate``, ``lag``
(offsets behind latest), ``batch_ms`` (the last micro-batch's duration), ``batches`` (of
the current run), ``run`` (its run id: a change is a restart) and ``watermark_lag_s``
(the end-to-end latency: the wall clock at the sample minus the job's event-time
watermark; a window is final and written once the watermark passes its end, so the
newest window in the sink ends at most this long ago, plus one trigger). With several
jobs, ``jobs`` holds each one's values and the top-level ones add them up (rates,
records, lag), take the worst (``batch_ms``, ``watermark_lag_s``, ``batches``: the
fewest) and ``status`` is ``RUNNING`` only when every job runs. From the broker:
``produced`` (the load topic's records, by its offsets) and ``broker_ms`` (a metadata
round trip through the run's bootstrap address, None when no broker answered in 5 s).
A probe that fails leaves its values None.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from workbench.kafka.admin import LOG

if TYPE_CHECKING:
    from workbench.chaos.env import ChaosEnv

INTERVAL_S = 1.0
TIMEOUT_S = 5.0  # per broker request; None past it


class Prober:
    def __init__(self, env: ChaosEnv, topic: str, t0: float, interval: float = INTERVAL_S):
        self.env, self.topic, self.t0, self.interval = env, topic, t0, interval
        self.samples: list[dict[str, Any]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chaos-probe", daemon=True)
        self._consumer: Any = None

    def start(self) -> Prober:
        """A first sample now (the broker connection set up before any fault), then one a
        second."""
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> list[dict[str, Any]]:
        self._done.set()
        self._thread.join(15)
        if self._consumer is not None:
            self._consumer.close()
        return self.samples

    def sample(self) -> dict[str, Any]:
        """One sample now (also what the recovery wait asks)."""
        out: dict[str, Any] = {"t": round(time.monotonic() - self.t0, 3)}
        out.update(self._job())
        out.update(self._broker())
        self.samples.append(out)
        return out

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            self.sample()

    def _job(self) -> dict[str, Any]:
        if self.env.client is None or not self.env.targets():
            return {}
        try:
            views = self.env.job_views()
        except Exception:  # noqa: BLE001 - the service may be what is down
            return {"records": None, "lag": None}
        each = {ref: job_sample(view) for ref, view in views.items()}
        if len(each) == 1:
            return next(iter(each.values()))
        return {**combine(list(each.values())), "jobs": each}

    def _broker(self) -> dict[str, Any]:
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        if self._consumer is None:
            conf = {"bootstrap.servers": self.env.bootstrap, "group.id": "chaos-probe"}
            self._consumer = Consumer({**conf, "logger": LOG})
        t0 = time.monotonic()
        try:
            topic = self._consumer.list_topics(self.topic, TIMEOUT_S).topics[self.topic]
            broker_ms = round((time.monotonic() - t0) * 1000, 1)
            produced = 0
            for partition in topic.partitions:
                tp = TopicPartition(self.topic, partition)
                produced += self._consumer.get_watermark_offsets(tp, TIMEOUT_S)[1]
        except (KafkaException, KeyError):
            return {"broker_ms": None, "produced": None}
        return {"broker_ms": broker_ms, "produced": produced}


def job_sample(view: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """One job's probe values from its job service view."""
    metrics = view.get("metrics") or {}
    return {
        "status": view.get("status"),
        "run": (view.get("run") or {}).get("id"),
        "records": metrics.get("records"),
        "processed_rate": metrics.get("processed_rate"),
        "input_rate": metrics.get("input_rate"),
        "lag": metrics.get("offsets_behind_latest"),
        "batch_ms": metrics.get("batch_duration_ms"),
        "batches": metrics.get("batches"),
        "watermark_lag_s": watermark_lag(metrics.get("watermark"), now),
    }


def watermark_lag(watermark: str | None, now: float | None = None) -> float | None:
    """Seconds from the job's event-time watermark (ISO-8601) to ``now`` (None without one:
    a job that has seen no event)."""
    from datetime import datetime

    if not watermark:
        return None
    stamp = datetime.fromisoformat(str(watermark).replace("Z", "+00:00")).timestamp()
    if stamp <= 0:  # Spark's watermark before the first event is the epoch
        return None
    return round((time.time() if now is None else now) - stamp, 3)


def combine(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Several jobs' values as one: sums, the worst of each, RUNNING when all run."""

    def values(key: str) -> list[Any] | None:
        got = [s.get(key) for s in samples]
        return None if any(v is None for v in got) else got

    def total(key: str) -> Any:
        got = values(key)
        return None if got is None else sum(got)

    def worst(key: str, pick: Any = max) -> Any:
        got = values(key)
        return None if got is None else pick(got)

    statuses = [s.get("status") for s in samples]
    return {
        "status": "RUNNING" if all(x == "RUNNING" for x in statuses) else
        next(x for x in statuses if x != "RUNNING"),
        "run": ",".join(str(s.get("run")) for s in samples),
        **{k: total(k) for k in ("records", "processed_rate", "input_rate", "lag")},
        "batch_ms": worst("batch_ms"),
        "batches": worst("batches", min),
        "watermark_lag_s": worst("watermark_lag_s"),
    }  # fmt: skip
