"""The alert state machine: pure (no Spark, no database), shared by the job service and
test-fire, so both see the same firing windows.

An :class:`Evaluator` takes, rule by rule, *points* (``at``: epoch ms) and the label sets
for which the rule's condition holds there (``firing``: fingerprint → {labels, values}).
Per label set (one :class:`AlertState`, keyed by :func:`fingerprint`):

- listed (true): inactive → ``pending`` (``active_since = at``); pending → ``firing`` once
  ``at - active_since >= for`` (``for`` 0: at once) — one ``firing`` :class:`Transition`;
- not listed (false): pending → inactive (never notified); firing stays firing until
  ``at - last_true >= keep_firing_for`` (hysteresis), then one ``resolved`` transition
  (``ends_at = at``);
- points of a rule are taken in increasing order: a point older than the rule's last
  point is late and ignored (neither its trues nor its falses count); a point equal to it
  (a window updated by a later batch) applies its trues only.

Exactly one transition per change. Health rules use the same machine with ``at`` = the
service tick's wall clock and ``labels = {}``. :meth:`Evaluator.expire` resolves a rule's
firing alerts when no point will come (the job service's ``resolve_timeout_s``, a stopped
job).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from workbench.alerts.rules import AlertRule

#: How long a resolved alert's state is kept (in the rule's point time) before it is dropped.
RESOLVED_KEPT_MS = 15 * 60_000

Status = Literal["pending", "firing", "inactive"]


def fingerprint(job: str, rule: str, labels: Mapping[str, str]) -> str:
    """A stable id of one alert: sha256 of (job, rule, sorted labels), 16 hex digits."""
    items = sorted((str(k), str(v)) for k, v in labels.items())
    text = json.dumps([job, rule, items], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class AlertState:
    """Where one label set of one rule stands (times are epoch ms of rule points)."""

    fingerprint: str
    rule: str
    labels: dict[str, str]
    status: Status = "inactive"
    active_since: int | None = None
    firing_since: int | None = None
    last_true: int | None = None
    value: dict[str, Any] = field(default_factory=dict)
    resolved_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AlertState:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class Transition:
    """An alert starting to fire or resolving: what a notification is made of."""

    fingerprint: str
    rule: str
    labels: dict[str, str]
    status: Literal["firing", "resolved"]
    at: int
    starts_at: int
    ends_at: int | None
    values: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Evaluator:
    """The state machine over many rules of one job (see the module docstring).

    ``states`` (fingerprint → :class:`AlertState`) and ``last_at`` (rule → its last point)
    are all it keeps: :meth:`to_dict` / :meth:`from_dict` persist them.
    """

    def __init__(
        self,
        rules: Sequence[AlertRule],
        job: str,
        states: dict[str, AlertState] | None = None,
        last_at: dict[str, int] | None = None,
    ):
        self.rules = {r.name: r for r in rules}
        self.job = job
        self.states: dict[str, AlertState] = states if states is not None else {}
        self.last_at: dict[str, int] = last_at if last_at is not None else {}

    def step(self, rule: str, at: int, firing: Mapping[str, Mapping[str, Any]]) -> list[Transition]:
        """Apply one point of ``rule``; the transitions it causes. A rule this evaluator
        does not know (removed from the spec since) changes nothing."""
        spec = self.rules.get(rule)
        last = self.last_at.get(rule)
        if spec is None or (last is not None and at < last):
            return []
        out = [t for fp, hit in firing.items() if (t := self._true(spec, fp, at, hit))]
        if last is None or at > last:
            listed = set(firing)
            for state in [s for s in self.states.values() if s.rule == rule]:
                if state.fingerprint not in listed and (t := self._false(spec, state, at)):
                    out.append(t)
            self.last_at[rule] = at
        return out

    def feed(self, observations: Iterable[Any]) -> list[Transition]:
        """Apply observations in order (objects or dicts with ``rule``, ``at``, ``firing``,
        as :mod:`workbench.alerts.observe` makes and ``alerts.jsonl`` holds them)."""
        out: list[Transition] = []
        for obs in observations:
            data = obs if isinstance(obs, Mapping) else vars(obs)
            out += self.step(data["rule"], int(data["at"]), data["firing"])
        return out

    def expire(self, rule: str, at: int) -> list[Transition]:
        """Resolve every alert of ``rule`` firing, at ``at`` (no point will come to resolve
        them: the job's input or the job stopped); pending ones are forgotten. The rule's
        last point stays, so the points that come later count as before."""
        out = []
        for state in [s for s in self.states.values() if s.rule == rule]:
            if state.status == "pending":
                del self.states[state.fingerprint]
            elif state.status == "firing":
                state.status, state.active_since = "inactive", None
                state.resolved_at = self.last_at.get(rule, at)  # kept in point time
                out.append(self._transition(state, "resolved", at))
        return out

    def firing(self) -> list[AlertState]:
        return [s for s in self.states.values() if s.status == "firing"]

    # --- one label set ---
    def _true(self, rule: AlertRule, fp: str, at: int, hit: Mapping[str, Any]) -> Transition | None:
        labels = {str(k): str(v) for k, v in (hit.get("labels") or {}).items()}
        state = self.states.get(fp) or AlertState(fp, rule.name, labels)
        self.states[fp] = state
        state.last_true = at if state.last_true is None else max(at, state.last_true)
        state.value = dict(hit.get("values") or {})
        if state.status == "inactive":
            state.status, state.active_since = "pending", at
        since = at if state.active_since is None else state.active_since
        if state.status == "pending" and at - since >= rule.for_ms:
            state.status, state.firing_since, state.resolved_at = "firing", at, None
            return self._transition(state, "firing", at)
        return None

    def _false(self, rule: AlertRule, state: AlertState, at: int) -> Transition | None:
        if state.status == "pending":
            del self.states[state.fingerprint]  # never notified: nothing to remember
        elif state.status == "firing":
            last_true = at if state.last_true is None else state.last_true
            if at - last_true >= rule.keep_firing_for_ms:
                state.status, state.resolved_at, state.active_since = "inactive", at, None
                return self._transition(state, "resolved", at)
        elif state.resolved_at is not None and at - state.resolved_at > RESOLVED_KEPT_MS:
            del self.states[state.fingerprint]
        return None

    @staticmethod
    def _transition(state: AlertState, status: Literal["firing", "resolved"], at: int):
        return Transition(
            state.fingerprint,
            state.rule,
            dict(state.labels),
            status,
            at,
            state.firing_since if state.firing_since is not None else at,
            at if status == "resolved" else None,
            dict(state.value),
        )

    # --- persistence ---
    def to_dict(self) -> dict[str, Any]:
        """``states`` and ``last_at`` as JSON-ready data."""
        return {
            "states": {fp: s.to_dict() for fp, s in self.states.items()},
            "last_at": dict(self.last_at),
        }

    @classmethod
    def from_dict(cls, rules: Sequence[AlertRule], job: str, data: Mapping[str, Any]) -> Evaluator:
        states = {fp: AlertState.from_dict(s) for fp, s in (data.get("states") or {}).items()}
        return cls(rules, job, states, {k: int(v) for k, v in (data.get("last_at") or {}).items()})
