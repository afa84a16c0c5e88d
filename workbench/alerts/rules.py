"""Alert rules as a spec's ``alerts:`` list holds them, and its ``notifiers:`` entries.

A rule is either a **metric rule** (``when``: a Spark SQL boolean over the result
columns, evaluated in the job on each micro-batch) or a **health rule** (``health``: one
of the forms in :data:`HEALTH_FORMS`, evaluated by the job service from the job's status
and heartbeat metrics): the two :class:`RuleKind` of :data:`RULE_KINDS`, which callers ask
rather than branch on. Both share ``for``, ``keep_firing_for``, ``severity``, the
``summary``/``description`` templates and ``notify`` (notifier names).

Parsing checks what the rule alone can tell (names, durations, the expression's syntax,
templates); :func:`check_columns` checks ``when``, ``group_by``, ``time`` and the
templates against the result columns (``workbench validate`` and submit do).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workbench.durations import to_millis
from workbench.exceptions import SpecError, SqlError, UnknownNameError, clip, did_you_mean
from workbench.plugins import Plugins

if TYPE_CHECKING:
    from sqlglot import exp

SEVERITIES = ("critical", "error", "warning", "info")
#: The job statuses a ``status in (...)`` health rule may name.
JOB_STATUSES = (
    "WAITING",
    "STARTING",
    "RUNNING",
    "LAGGING",
    "STOPPING",
    "STOPPED",
    "BACKING_OFF",
    "FAILED",
)
#: The metrics a health rule may compare with a number (the service computes them).
HEALTH_METRICS = (
    "offsets_behind_latest",
    "dead_letter_ratio",
    "late_ratio",
    "input_rate",
    "processed_rate",
    "batch_duration_ms",
    "dead_letters",
    "late",
    "records",
)
#: Health conditions written as a bare word (true while the job shows no input / writes).
HEALTH_WORDS = ("no_data", "no_sink_write")
HEALTH_FORMS = (
    "status in (FAILED, BACKING_OFF)",
    "<metric> > <number> (also >=, <, <=, =, !=)",
    "no_data",
    "no_sink_write",
)
#: Template names every rule may use besides its columns.
TEMPLATE_NAMES = ("value", "rule", "job")

_RULE_NAME = re.compile(r"^[a-z0-9_-]+$")
_NOTIFIER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_STATUS_IN = re.compile(r"^\s*status\s+in\s*\((?P<items>[^()]*)\)\s*$", re.IGNORECASE)
_COMPARE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|!=|==|=|>|<)\s*"
    r"(?P<number>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$"
)
_OPS = {
    ">": float.__gt__,
    ">=": float.__ge__,
    "<": float.__lt__,
    "<=": float.__le__,
    "=": float.__eq__,
    "==": float.__eq__,
    "!=": float.__ne__,
}


class HealthCondition:
    """A parsed ``health:`` condition, one of :data:`HEALTH_FORMS`."""

    def holds(self, status: str, metrics: Mapping[str, Any]) -> bool:
        """Whether the condition is true for a job in ``status`` with ``metrics`` (for the
        words, ``metrics[word]`` is the service's verdict; a missing metric is false)."""
        raise NotImplementedError

    def shown(self, status: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
        """The values an alert of this condition shows."""
        raise NotImplementedError


@dataclass(frozen=True)
class StatusIn(HealthCondition):
    """``status in (FAILED, BACKING_OFF)``."""

    statuses: tuple[str, ...]

    def holds(self, status: str, metrics: Mapping[str, Any]) -> bool:
        return status.upper() in self.statuses

    def shown(self, status: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
        return {"status": status}


@dataclass(frozen=True)
class Compare(HealthCondition):
    """``<metric> <op> <number>``, a metric of :data:`HEALTH_METRICS`."""

    metric: str
    op: str
    threshold: float

    def holds(self, status: str, metrics: Mapping[str, Any]) -> bool:
        value = metrics.get(self.metric)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return _OPS[self.op](float(value), self.threshold)

    def shown(self, status: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
        return {self.metric: metrics.get(self.metric)}


@dataclass(frozen=True)
class Verdict(HealthCondition):
    """A word of :data:`HEALTH_WORDS`: the service's verdict of that name."""

    word: str

    def holds(self, status: str, metrics: Mapping[str, Any]) -> bool:
        return bool(metrics.get(self.word))

    def shown(self, status: str, metrics: Mapping[str, Any]) -> dict[str, Any]:
        return {self.word: True}


def parse_health(text: str) -> HealthCondition:
    """The condition in ``text``; ValueError naming the known forms and words."""
    if text.strip() in HEALTH_WORDS:
        return Verdict(text.strip())
    match = _STATUS_IN.match(text)
    if match:
        items = [i.strip().strip("'\"").upper() for i in match["items"].split(",") if i.strip()]
        unknown = [i for i in items if i not in JOB_STATUSES]
        if not items:
            raise ValueError("name job statuses, e.g. status in (FAILED, BACKING_OFF)")
        if unknown:
            bad = unknown[0]
            raise ValueError(f"unknown job status '{clip(bad)}'.{did_you_mean(bad, JOB_STATUSES)}")
        return StatusIn(tuple(items))
    match = _COMPARE.match(text)
    if match:
        if match["metric"] not in HEALTH_METRICS:
            raise ValueError(
                f"unknown health metric '{clip(match['metric'])}'."
                f"{did_you_mean(match['metric'], (*HEALTH_METRICS, *HEALTH_WORDS))}"
            )
        return Compare(match["metric"], match["op"], float(match["number"]))
    raise ValueError(
        f"'{clip(text)}' is not a health condition; write one of: {'; '.join(HEALTH_FORMS)}. "
        f"Metrics: {', '.join(HEALTH_METRICS)}"
    )


def parse_when(text: str) -> exp.Expr:
    """``text`` as a Spark SQL expression (sqlglot); SqlError with line and column."""
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    from workbench.sql.parse import _from_parse_error

    if not text.strip():
        raise SqlError("The condition is empty: write e.g. 'bookings > 300'.", text)
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except ParseError as err:
        raise _from_parse_error(err, text) from None
    except TokenError as err:
        raise SqlError(f"Cannot read the condition: {err}.", text) from None
    if isinstance(tree, sqlglot.exp.Query):
        raise SqlError(
            "A condition is an expression such as 'bookings > 300', not a query.", text, 1, 1
        )
    return tree


def template_names(template: str) -> list[str]:
    """The ``{name}`` fields of a summary/description template; ValueError if malformed."""
    names = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field is not None:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
                raise ValueError(f"'{{{clip(field)}}}' is not a field: write {{column}}")
            names.append(field)
    return names


def render(template: str, fields: Mapping[str, Any]) -> str:
    """``template`` with its ``{name}`` fields filled from ``fields`` (unknown ones kept)."""

    class _Keep(dict):
        def __missing__(self, key: str) -> str:
            return "{" + key + "}"

    try:
        return string.Formatter().vformat(template, (), _Keep(fields))
    except (ValueError, IndexError):
        return template


class AlertRule(BaseModel):
    """One entry of a spec's ``alerts:`` (keys as in docs/alerts.md)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    name: str
    when: str | None = Field(None, description="Spark SQL boolean over the result columns")
    health: str | None = Field(None, description="a job-health condition (HEALTH_FORMS)")
    group_by: list[str] = Field(default_factory=list, description="result columns → labels")
    time: str = Field("window_timestamp", description="result column of the evaluation point")
    for_: str | int = Field(0, alias="for")
    keep_firing_for: str | int = 0
    severity: Literal["critical", "error", "warning", "info"] = "warning"
    summary: str = ""
    description: str = ""
    notify: list[str] = Field(default_factory=list)
    group_wait: str | int = "10s"
    repeat_interval: str | int = "4h"

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _RULE_NAME.match(value):
            raise ValueError("an alert name is lower-case letters, digits, '-' and '_'")
        return value

    @field_validator("for_", "keep_firing_for", "group_wait", "repeat_interval")
    @classmethod
    def _duration(cls, value: str | int) -> str | int:
        to_millis(value)
        return value

    @field_validator("when")
    @classmethod
    def _when(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_when(value)
            except SqlError as err:
                raise ValueError(str(err)) from None
        return value

    @field_validator("health")
    @classmethod
    def _health(cls, value: str | None) -> str | None:
        if value is not None:
            parse_health(value)
        return value

    @field_validator("summary", "description")
    @classmethod
    def _template(cls, value: str) -> str:
        template_names(value)
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> AlertRule:
        given = [kind for kind in RULE_KINDS if getattr(self, kind.key) is not None]
        if len(given) != 1:
            raise ValueError(
                f"alert '{self.name}': give exactly one of 'when' (a condition over the "
                "result columns) or 'health' (a job-health condition)"
            )
        given[0].check(self)
        return self

    # --- derived ---
    @property
    def rule_kind(self) -> RuleKind:
        """This rule's kind (:data:`RULE_KINDS`): the one whose key it gives."""
        return next(kind for kind in RULE_KINDS if getattr(self, kind.key) is not None)

    @property
    def kind(self) -> str:
        """``metric`` or ``health``, as messages name it."""
        return self.rule_kind.name

    @property
    def for_ms(self) -> int:
        return to_millis(self.for_)

    @property
    def keep_firing_for_ms(self) -> int:
        return to_millis(self.keep_firing_for)

    @property
    def group_wait_ms(self) -> int:
        return to_millis(self.group_wait)

    @property
    def repeat_interval_ms(self) -> int:
        return to_millis(self.repeat_interval)

    @property
    def condition(self) -> HealthCondition | None:
        return parse_health(self.health) if self.health is not None else None

    @cached_property  # parsing ``when`` costs ~0.3 ms; observe asks per matched row
    def when_columns(self) -> list[str]:
        """The result columns ``when`` reads, in order of appearance."""
        return list(dict.fromkeys(name for name, _, _ in _columns_of(self.when or "")))

    @cached_property
    def value_columns(self) -> list[str]:
        """Columns whose values an observation carries: ``when``'s, then the templates'
        (not the labels, which it carries anyway)."""
        named = [*self.when_columns, *template_names(self.summary)]
        named += template_names(self.description)
        skip = {*self.group_by, *TEMPLATE_NAMES}
        return [c for c in dict.fromkeys(named) if c not in skip]

    def annotations(self, job: str, labels: Mapping[str, str], values: Mapping[str, Any]):
        """``summary`` and ``description`` rendered for one alert (``{value}``: its kind's
        :meth:`~RuleKind.value`)."""
        first = self.rule_kind.value(self, values)
        fields = {**values, **labels, "value": first, "rule": self.name, "job": job}
        return {
            "summary": render(self.summary, fields) or self.default_summary(job, values),
            "description": render(self.description, fields),
        }

    def default_summary(self, job: str, values: Mapping[str, Any]) -> str:
        """The summary of a rule without one: ``hot-cell on surge: bookings > 300
        (bookings=412)``."""
        shown = ", ".join(f"{k}={v}" for k, v in values.items())
        return f"{self.name} on {job}: {self.when or self.health}" + (
            f" ({shown})" if shown else ""
        )


def _columns_of(text: str) -> list[tuple[str, int, int]]:
    """(column name, line, column) of each column ``text`` reads."""
    from sqlglot import exp

    if not text.strip():
        return []
    found = []
    for column in parse_when(text).find_all(exp.Column):
        meta = column.this.meta if isinstance(column.this, exp.Identifier) else {}
        line, col = meta.get("line", 1), meta.get("col", len(column.name))
        found.append((column.name, line, col - len(column.name) + 1))
    return sorted(found, key=lambda f: (f[1], f[2]))


class RuleKind:
    """One kind of alert rule (:data:`RULE_KINDS`): the key that makes a rule of it, who
    evaluates it, what it checks and what an alert of it shows as ``{value}``."""

    name: ClassVar[str]
    #: the rule's key that makes it of this kind (a rule gives exactly one)
    key: ClassVar[str]
    #: evaluated by the job on each micro-batch (else by the job service)
    in_job: ClassVar[bool]

    def check(self, rule: AlertRule) -> None:
        """ValueError if ``rule`` has a key this kind does not take."""

    def check_columns(self, index: int, rule: AlertRule, known: Sequence[str]) -> None:
        """SpecError if ``rule`` (``alerts[index]``) names a column ``known`` lacks."""

    def value(self, rule: AlertRule, values: Mapping[str, Any]) -> Any:
        """An alert's ``{value}``, from the ``values`` it carries."""
        raise NotImplementedError


class MetricRule(RuleKind):
    """``when``: a Spark SQL boolean over the result columns, evaluated by the job."""

    name, key, in_job = "metric", "when", True

    def check_columns(self, index: int, rule: AlertRule, known: Sequence[str]) -> None:
        for name, line, col in _columns_of(rule.when or ""):
            if name not in known:
                message = f"Unknown column '{clip(name)}'.{did_you_mean(name, known)}"
                err = SqlError(message, rule.when or "", line, col, len(name))
                raise SpecError(f"alerts[{index}].when", str(err))
        for key, names in (("group_by", rule.group_by), ("time", [rule.time])):
            _known(index, key, names, known)
        for key in ("summary", "description"):
            names = [n for n in template_names(getattr(rule, key)) if n not in TEMPLATE_NAMES]
            _known(index, key, names, known)

    def value(self, rule: AlertRule, values: Mapping[str, Any]) -> Any:
        """The first value of ``when``'s columns."""
        return next((values[c] for c in rule.when_columns if c in values), "")


class HealthRule(RuleKind):
    """``health``: a job-health condition, evaluated by the job service from the job's
    status and heartbeat."""

    name, key, in_job = "health", "health", False

    def check(self, rule: AlertRule) -> None:
        if rule.group_by:
            raise ValueError(
                f"alert '{rule.name}': a health rule has no group_by (one alert per job)"
            )

    def value(self, rule: AlertRule, values: Mapping[str, Any]) -> Any:
        """The measured value (the first of ``values``)."""
        return next(iter(values.values()), "")


RULE_KINDS = Plugins[RuleKind]("alert rule kind")
for _kind in (MetricRule(), HealthRule()):
    RULE_KINDS.add(_kind.name, _kind)


def in_job(rules: Iterable[AlertRule]) -> list[AlertRule]:
    """The rules the job evaluates on its micro-batches (its kind's ``in_job``)."""
    return [rule for rule in rules if rule.rule_kind.in_job]


def in_service(rules: Iterable[AlertRule]) -> list[AlertRule]:
    """The rules the job service evaluates (from the job's status and heartbeat)."""
    return [rule for rule in rules if not rule.rule_kind.in_job]


class NotifierRef(BaseModel):
    """A spec's ``notifiers:`` entry as far as the spec checks it: its ``type`` and
    ``send_resolved``; the rest is the notifier type's own config, validated by the
    notifier registry (:mod:`workbench.notify.registry`) when it is installed."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    send_resolved: bool = True


class NotifierProblem(ValueError):
    """A bad ``notifiers:`` entry; ``key`` is the path under ``notifiers`` (name, field)."""

    def __init__(self, key: Sequence[str], message: str):
        self.key = list(key)
        super().__init__(message)


def check_notifiers(value: Any) -> dict[str, dict[str, Any]]:
    """A spec's ``notifiers:`` mapping, each entry checked (kept as written: secret
    references stay unresolved); :class:`NotifierProblem` naming the entry and field."""
    if not isinstance(value, Mapping):
        raise ValueError("expected a mapping of notifier names to {type: ..., ...}")
    out = {}
    for name, item in value.items():
        if not isinstance(name, str) or not _NOTIFIER_NAME.match(name):
            raise ValueError(f"notifier name '{clip(name)}': letters, digits, '-' and '_'")
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            raise NotifierProblem([name], "needs a 'type' (e.g. webhook, slack)")
        _validate(name, NotifierRef, dict(item))
        _registry_check(name, dict(item))
        out[name] = dict(item)
    return out


def _validate(name: str, model: type[BaseModel], item: dict[str, Any]) -> None:
    from pydantic import ValidationError

    try:
        model.model_validate(item)
    except ValidationError as err:
        first = err.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        raise NotifierProblem([name, *map(str, first["loc"])], message) from None


def _registry_check(name: str, item: dict[str, Any]) -> None:
    """Validate through the notifier registry (:mod:`workbench.notify.registry`) when it
    is installed."""
    try:
        from workbench.notify.registry import NOTIFIERS
    except ImportError:
        return

    try:
        model = NOTIFIERS.get(item["type"])
    except UnknownNameError as err:
        raise NotifierProblem([name, "type"], str(err).rstrip(".")) from None
    _validate(name, model, item)


def check_columns(rules: Sequence[AlertRule], columns: Sequence[str]) -> None:
    """Every column a rule names is a result column; SpecError at the rule's key
    (``alerts[i].when`` with the expression's line and column), listing the known ones."""
    known = list(columns)
    for index, rule in enumerate(rules):
        rule.rule_kind.check_columns(index, rule, known)


def _known(index: int, key: str, names: Sequence[str], known: Sequence[str]) -> None:
    for name in names:
        if name not in known:
            raise SpecError(
                f"alerts[{index}].{key}",
                f"unknown column '{clip(name)}'.{did_you_mean(name, known)}",
            )
