"""Test-fire: a spec's metric rules over preview or replay rows, window by window.

The rows go through the job's own code: :func:`~workbench.alerts.observe.observe` (one
Spark job for all rules) and an :class:`~workbench.alerts.state.Evaluator`, so the firing
windows shown are the running job's for the same events (once its windows are final).
``wb.preview(...).alerts()`` and ``workbench alerts test`` show an :class:`AlertTest`;
``--send`` delivers the transitions through the spec's notifiers, grouped as the job
service groups them (one notification per rule and window), marked as a test.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import groupby
from typing import TYPE_CHECKING, Any

from workbench.alerts.observe import check, observe
from workbench.alerts.rules import AlertRule, in_job, in_service
from workbench.alerts.state import Evaluator, Transition
from workbench.exceptions import WorkbenchError, clip
from workbench.notify.notification import reason
from workbench.notify.registry import NOTIFIERS, Alert, Notification, deliver

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

    from workbench.spec import DaggerSpec

COLUMNS = ("rule", "labels", "firing_at", "resolved_at", "values", "summary")


@dataclass
class AlertTest:
    """Transitions of a spec's metric rules over some rows; a table in a notebook."""

    job: str
    rules: list[AlertRule]
    transitions: list[Transition]
    points: int = 0  # (rule, window) points evaluated
    skipped: list[str] = field(default_factory=list)  # health rules: the service's

    def windows(self) -> list[dict[str, Any]]:
        """One entry per firing window: rule, labels, firing_at, resolved_at (None: still
        firing at the last row), values when it fired, its summary."""
        rules = {r.name: r for r in self.rules}
        open_: dict[str, dict[str, Any]] = {}
        out = []
        for t in self.transitions:
            if t.status == "firing":
                notes = rules[t.rule].annotations(self.job, t.labels, t.values)
                open_[t.fingerprint] = {
                    "rule": t.rule, "labels": t.labels, "firing_at": t.at, "resolved_at": None,
                    "values": t.values, "summary": notes["summary"],
                }  # fmt: skip
                out.append(open_[t.fingerprint])
            elif t.fingerprint in open_:
                open_.pop(t.fingerprint)["resolved_at"] = t.at
        return out

    @property
    def rows(self) -> pd.DataFrame:
        import pandas as pd

        shown = [
            w | {
                "labels": _labels(w["labels"]),
                "firing_at": _time(w["firing_at"]),
                "resolved_at": _time(w["resolved_at"]),
                "values": ", ".join(f"{k}={v}" for k, v in w["values"].items()),
            }
            for w in self.windows()
        ]  # fmt: skip
        return pd.DataFrame(shown, columns=list(COLUMNS))

    def summary(self) -> str:
        windows = self.windows()
        still = sum(1 for w in windows if w["resolved_at"] is None)
        names = ", ".join(r.name for r in self.rules) or "(no metric rules)"
        text = (
            f"{len(windows)} firing window(s), {still} still firing at the last row, from "
            f"{self.points} rule points; rules: {names}"
        )
        if self.skipped:
            text += f"; not test-fired (health rules, the job service's): {', '.join(self.skipped)}"
        return text

    def _shown(self) -> pd.DataFrame:
        """:attr:`rows` with "-" for a window still firing at the last row."""
        rows = self.rows
        return rows.assign(resolved_at=[t or "-" for t in rows["resolved_at"]])

    def __repr__(self) -> str:
        rows = self._shown()
        table = rows.to_string(index=False) if len(rows) else "(no alert fired)"
        return f"{self.summary()}\n{table}"

    def _repr_html_(self) -> str:
        rows = self._shown()
        table = rows.to_html(index=False, border=0) if len(rows) else "<p>(no alert fired)</p>"
        return (
            f'<div class="dagger-alerts"><p><b>{html.escape(self.summary())}</b></p>{table}</div>'
        )


def evaluate(df: DataFrame, rules: Sequence[AlertRule], job: str) -> AlertTest:
    """Test-fire ``rules`` over the result rows ``df``."""
    check(df, rules)
    metric = in_job(rules)
    observations = observe(df, metric, job)
    transitions = Evaluator(metric, job).feed(observations)
    skipped = [r.name for r in in_service(rules)]
    return AlertTest(job, metric, transitions, len(observations), skipped)


def rules_of(spec: DaggerSpec | None, rules: Sequence[AlertRule | dict] | None) -> list[AlertRule]:
    """``rules`` (models or ``alerts:`` entries), else the spec's; an error when none."""
    if rules is not None:
        return [r if isinstance(r, AlertRule) else AlertRule.model_validate(r) for r in rules]
    if spec is None or not spec.alerts:
        raise WorkbenchError(
            "no alert rules to test: add an 'alerts:' list to the spec (wb.use(spec)), or "
            "pass rules=[{'name': ..., 'when': ...}]"
        )
    return list(spec.alerts)


def send(test: AlertTest, spec: DaggerSpec, out: Any = print) -> int:
    """Deliver the test's transitions to their rules' notifiers (the spec's ``notifiers``)
    as the job service groups them: at each window where a rule's alerts changed, one
    notification per notifier with all the rule's alerts (firing, and resolved at that
    window), marked as a test; how many notifications were sent."""

    configs = {name: NOTIFIERS.config(data) for name, data in spec.notifiers.items()}
    for rule in test.rules:
        if any(t.rule == rule.name for t in test.transitions):
            _check_receivers(rule, configs)
    sent = 0
    for rule, note in _flushes(test, spec):
        firing, resolved = len(note.firing), len(note.resolved)
        counts = ", ".join(
            f"{n} {what}" for n, what in ((firing, "firing"), (resolved, "resolved")) if n
        )
        for name in rule.notify:
            deliver(configs[name], replace(note, receiver=name))
            out(f"sent {rule.name} ({counts}) to {name}")
            sent += 1
    return sent


def _check_receivers(rule: AlertRule, configs: dict[str, Any]) -> None:
    for name in rule.notify:
        if name not in configs:
            raise WorkbenchError(
                f"alert '{rule.name}' notifies '{clip(name)}', which is not in the spec's "
                f"notifiers ({', '.join(configs) or 'none'}): team notifiers live in the "
                "job service; test-fire sends only through the spec's own"
            )


def _flushes(test: AlertTest, spec: DaggerSpec) -> Iterator[tuple[AlertRule, Notification]]:
    """One notification per rule and window where its alerts changed: the rule's alerts
    firing after the window and those it resolved, with Alertmanager's reason."""
    rules = {r.name: r for r in test.rules}
    firing: dict[str, dict[str, Alert]] = {name: {} for name in rules}
    for (name, _), changed in groupby(test.transitions, key=lambda t: (t.rule, t.at)):
        rule, group = rules[name], firing[name]
        told, resolved = set(group), []
        for t in changed:
            alert = _alert(test, spec, rule, t)
            if t.status == "firing":
                group[t.fingerprint] = alert
            else:
                group.pop(t.fingerprint, None)
                resolved.append(alert)
        alerts = sorted([*group.values(), *resolved], key=lambda a: sorted(a.labels.items()))
        why = reason(told, set(group), {a.fingerprint for a in resolved})
        status = "firing" if group else "resolved"
        key = f"test/{test.job}/{rule.name}"
        yield rule, Notification("", key, alerts, status, "", test=True, reason=why)


def _alert(test: AlertTest, spec: DaggerSpec, rule: AlertRule, t: Transition) -> Alert:
    return Alert(
        fingerprint=t.fingerprint,
        rule=rule.name,
        job=test.job,
        team=spec.team,
        status=t.status,
        labels=dict(t.labels),
        annotations=rule.annotations(test.job, t.labels, t.values),
        severity=rule.severity,
        starts_at=_datetime(t.starts_at),
        ends_at=_datetime(t.ends_at) if t.ends_at is not None else None,
        generator_url="",
        values=dict(t.values),
    )


def _datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _time(ms: int | None) -> str | None:
    return (
        None if ms is None else _datetime(ms).isoformat(timespec="seconds").replace("+00:00", "Z")
    )


def _labels(labels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in labels.items()) or "-"
