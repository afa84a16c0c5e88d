"""Health rules: what the job service measures of each job every supervisor tick, from the
job's status and its live run's heartbeat, so the rules work while the job is down.

:meth:`HealthWatch.measure` gives the values a :class:`~workbench.alerts.rules.HealthCondition`
reads: the heartbeat's metrics (``offsets_behind_latest``, ``input_rate``,
``processed_rate``, ``batch_duration_ms``, ``records``, ``dead_letters``, ``late``) and,
over the last ``alerting.health_window_s`` seconds (default 60):

- ``dead_letter_ratio``: dead letters / records read (decoded + dead letters);
- ``late_ratio``: late rows / decoded records;
- ``no_data``: true when the job should run but read no input record in the window (or
  has no live run at all);
- ``no_sink_write``: true when the job should run but wrote no row to a sink in the
  window (or has no live run).

A run younger than the window is measured from its start; a stopped job (desired
stopped) answers only ``status in (...)`` rules. :func:`observe` turns one rule's verdict
into the state machine's input: one label set (no labels) when true, none when false.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.alerts.state import fingerprint
from workbench.jobs.db import Job, Run
from workbench.jobs.views import epoch

if TYPE_CHECKING:
    from workbench.alerts.rules import AlertRule

#: heartbeat metrics a rule may compare directly
BEAT_METRICS = (
    "offsets_behind_latest",
    "input_rate",
    "processed_rate",
    "batch_duration_ms",
    "records",
    "dead_letters",
    "late",
)


@dataclass(frozen=True)
class _Sample:
    at: float
    run: str
    records: float
    dead_letters: float
    late: float


class HealthWatch:
    """Recent heartbeat samples per job (in memory) and the values measured from them."""

    def __init__(self, window_s: float):
        self.window_s = window_s
        self._samples: dict[int, deque[_Sample]] = {}

    def measure(self, job: Job, run: Run | None, beat: dict | None, at: float) -> dict[str, Any]:
        """The health values of ``job`` at ``at`` (epoch s); ``run`` is its live run."""
        if job.desired != "running":
            self._samples.pop(job.id, None)
            return {}
        if run is None:
            self._samples.pop(job.id, None)
            return {"no_data": True, "no_sink_write": True}
        metrics = (beat or {}).get("metrics") or {}
        now = _Sample(at, run.run_id, *(_number(metrics.get(k)) for k in _TOTALS))
        base = self._baseline(job.id, now, run.started_at.timestamp())
        values: dict[str, Any] = {k: metrics.get(k) for k in BEAT_METRICS if k in metrics}
        if base is None:  # the run is younger than the window and no sample says more
            values |= {"no_data": False, "no_sink_write": False}
            return values
        read = now.records - base.records
        dead = now.dead_letters - base.dead_letters
        if read + dead > 0:
            values["dead_letter_ratio"] = dead / (read + dead)
        if read > 0:
            values["late_ratio"] = (now.late - base.late) / read
        wrote = epoch(metrics.get("last_sink_write_at"))
        values["no_data"] = read + dead <= 0
        values["no_sink_write"] = wrote is None or at - wrote >= self.window_s
        return values

    def _baseline(self, job_id: int, sample: _Sample, started: float) -> _Sample | None:
        """The newest sample of the run at least a window old (the run's start if the run
        began before the window), recording ``sample``; None if the run is too young."""
        kept = self._samples.setdefault(job_id, deque())
        while kept and kept[0].run != sample.run:
            kept.popleft()
        kept.append(sample)
        edge = sample.at - self.window_s
        while len(kept) > 1 and kept[1].at <= edge:
            kept.popleft()
        if kept[0].at <= edge:
            return kept[0]
        if started <= edge:
            return _Sample(started, sample.run, 0, 0, 0)
        return None


_TOTALS = ("records", "dead_letters", "late")


def observe(rule: AlertRule, job: Job, values: dict[str, Any]) -> dict[str, dict]:
    """The state machine's ``firing`` input for one health rule: ``{fingerprint: {labels,
    values}}`` when the condition holds, else ``{}``."""
    condition = rule.condition
    if condition is None or not condition.holds(job.status, values):
        return {}
    shown = condition.shown(job.status, values)
    return {fingerprint(job.name, rule.name, {}): {"labels": {}, "values": shown}}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
