"""DaggerSpec: the one YAML file that fully describes a dagger job.

``load(path)`` reads and validates a spec; every problem is reported as a
:class:`~workbench.exceptions.SpecError` naming the key (``streams[0].topics``)
and what is expected there.
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from workbench.alerts.rules import AlertRule, NotifierProblem, check_notifiers
from workbench.durations import to_millis
from workbench.exceptions import SpecError, UnknownNameError, clip
from workbench.resources import Resources
from workbench.schemas import DEFAULT_RECURSION_DEPTH
from workbench.sinks.registry import SINKS, SinkConfig
from workbench.yamlsafe import key_line, read_yaml

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
MAX_NAME = 100  # a dagger's name becomes a folder name (checkpoints, artifacts)
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StreamSpec(_Model):
    """One input stream: a Kafka topic (list or regex) decoded as one protobuf message."""

    table: str = Field(description="table name the SQL uses")
    message: str = Field(description="protobuf message name (full name, Java class or unique)")
    cluster: str = Field("local", description="Kafka cluster name, for people")
    bootstrap_servers: str = "127.0.0.1:9092"
    topics: list[str] | None = None
    topic_pattern: str | None = Field(None, description="regex of topics (Dagger's style)")
    event_timestamp_field: str = "event_timestamp"
    group_id: str | None = None
    starting_offsets: int | str | dict[str, dict[str, int]] = Field(
        "latest",
        description="earliest, latest, per-partition offsets {topic: {partition: offset}}, "
        "or a start time (epoch millis or ISO-8601)",
    )
    max_offsets_per_trigger: int | None = Field(None, gt=0)
    max_recursion_depth: int = Field(
        DEFAULT_RECURSION_DEPTH,
        ge=1,
        le=10,
        description="how many times a message may hold itself along a path; deeper is dropped",
    )
    kafka_options: dict[str, str] = Field(default_factory=dict)

    @field_validator("table")
    @classmethod
    def _table_name(cls, value: str) -> str:
        if not _TABLE.match(value):
            raise ValueError("a table name is letters, digits and '_', not starting with a digit")
        return value

    @field_validator("topic_pattern")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as err:
                raise ValueError(f"not a valid regular expression: {err}") from None
        return value

    @field_validator("starting_offsets")
    @classmethod
    def _offsets(cls, value: int | str | dict) -> int | str | dict:
        if isinstance(value, str) and value not in ("earliest", "latest"):
            try:
                datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(
                    "expected earliest, latest, {topic: {partition: offset}}, epoch millis "
                    "or an ISO-8601 time"
                ) from None
        return value

    @model_validator(mode="after")
    def _one_topic_form(self) -> StreamSpec:
        if bool(self.topics) == bool(self.topic_pattern):
            raise ValueError("give exactly one of 'topics' (a list) or 'topic_pattern' (a regex)")
        return self


class DeadLetterSpec(_Model):
    """Where undecodable records go: a dead-letter type of the sink registry (``parquet``:
    a folder, ``kafka``: a topic); ``SINKS.letters_sink(spec)`` makes its sink."""

    type: str = "parquet"
    path: str | None = None
    topic: str | None = None
    bootstrap_servers: str | None = None

    @field_validator("type")
    @classmethod
    def _registered(cls, value: str) -> str:
        try:
            SINKS.letters.get(value)
        except UnknownNameError as err:
            raise ValueError(str(err).rstrip(".")) from None
        return value


class DeduplicateSpec(_Model):
    """Each key of the result once within a span of event time (Dagger's
    DeDuplicationTransformer); see :mod:`workbench.streaming.dedup`."""

    keys: list[str] = Field(min_length=1, description="output columns that identify a row")
    within: str | int = Field(description="how long a key is remembered, in event time")
    columns: list[str] | None = Field(
        default=None,
        description="the output columns written after deduplicating (default: all the "
        "SQL's), so that the event time may be selected for deduplication only",
    )

    @field_validator("within")
    @classmethod
    def _span(cls, value: str | int) -> str | int:
        if to_millis(value) <= 0:
            raise ValueError("must be longer than 0, e.g. '10m'")
        return value

    @property
    def within_ms(self) -> int:
        return to_millis(self.within)


class DaggerSpec(_Model):
    name: str
    team: str = "default"
    description: str = ""
    streams: list[StreamSpec] = Field(min_length=1, max_length=2)
    sql: str
    rowtime_attribute: str = "rowtime"
    watermark_delay: str | int = "10s"
    trigger_interval: str | int = "10s"
    emit: Literal["final", "updates"] = "final"
    sinks: list[SinkConfig] = Field(default_factory=list)
    dead_letter: DeadLetterSpec = Field(default_factory=DeadLetterSpec)
    checkpoint: str | None = None
    deduplicate: DeduplicateSpec | None = None
    schemas: list[str] = Field(
        default_factory=list, description="extra .proto folders, descriptor-set files or URLs"
    )
    spark_conf: dict[str, str] = Field(default_factory=dict)
    resources: Resources | None = Field(
        default=None, description="cores, executor_memory, shuffle_partitions of the job"
    )
    alerts: list[AlertRule] = Field(default_factory=list, description="alert rules")
    notifiers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="named notifiers the alerts' notify lists use"
    )

    @field_validator("name")
    @classmethod
    def _job_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "a dagger name is letters, digits, '-' and '_', starting with a letter"
            )
        if len(value) > MAX_NAME:
            raise ValueError(
                f"a dagger name is at most {MAX_NAME} characters (it names folders), "
                f"got {len(value)}"
            )
        return value

    @field_validator("checkpoint")
    @classmethod
    def _checkpoint_folder(cls, value: str | None) -> str | None:
        if value is not None and Path(value).exists() and not Path(value).is_dir():
            raise ValueError(f"'{clip(value)}' is a file; give a folder (or a path not yet made)")
        return value

    @field_validator("watermark_delay", "trigger_interval")
    @classmethod
    def _duration(cls, value: str | int) -> str | int:
        to_millis(value)
        return value

    _sinks = field_validator("sinks", mode="before")(lambda cls, value: sink_list(value))
    _notifiers = field_validator("notifiers", mode="before")(
        lambda cls, value: check_notifiers(value)
    )

    @model_validator(mode="after")
    def _distinct_alerts(self) -> DaggerSpec:
        names = [a.name for a in self.alerts]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"alert names must differ within a spec, '{twice[0]}' is repeated")
        return self

    @model_validator(mode="after")
    def _distinct_tables(self) -> DaggerSpec:
        tables = [s.table for s in self.streams]
        if len(set(tables)) != len(tables):
            raise ValueError(f"stream tables must differ, got {tables}")
        return self

    @property
    def watermark_delay_ms(self) -> int:
        return to_millis(self.watermark_delay)

    @property
    def trigger_interval_ms(self) -> int:
        return to_millis(self.trigger_interval)

    def session_conf(self) -> dict[str, str]:
        """The Spark settings a session made for this job starts with: ``resources``
        (:mod:`workbench.resources`), what its sinks need (:meth:`SinkConfig.session_conf`),
        then ``spark_conf``."""
        sinks = {k: v for s in self.sinks for k, v in s.session_conf().items()}
        resources = self.resources.spark_conf() if self.resources else {}
        return {**resources, **sinks, **self.spark_conf}

    def stream(self, table: str) -> StreamSpec:
        for stream in self.streams:
            if stream.table == table:
                return stream
        raise UnknownNameError("stream", table, [s.table for s in self.streams])

    def with_bootstrap(self, servers: str) -> DaggerSpec:
        """This spec with every Kafka address (streams, Kafka sinks, dead letters) set to
        ``servers``."""
        streams = [s.model_copy(update={"bootstrap_servers": servers}) for s in self.streams]
        sinks = [s.with_bootstrap(servers) for s in self.sinks]
        dead = self.dead_letter.model_copy(update={"bootstrap_servers": servers})
        return self.model_copy(update={"streams": streams, "sinks": sinks, "dead_letter": dead})

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json", exclude_defaults=True)
        if self.sinks:
            data["sinks"] = [
                s.model_dump(mode="json", exclude_defaults=True) | {"type": s.type}
                for s in self.sinks
            ]
        return yaml.dump(
            _ordered(data), Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100
        )


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the SQL) as block scalars (``|``): trailing spaces dropped and
    tabs expanded, which YAML block scalars cannot hold."""


def _block_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" not in value.strip("\n"):
        return dumper.represent_str(value)
    text = "\n".join(line.rstrip().expandtabs(4) for line in value.split("\n"))
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")


_BlockDumper.add_representer(str, _block_str)


class _SinkError(ValueError):
    def __init__(
        self,
        index: int,
        err: ValidationError | UnknownNameError,
        model: type[SinkConfig] | None = None,
    ):
        self.index, self.err, self.model = index, err, model
        super().__init__(str(err))


def sink_list(value: Any) -> list[SinkConfig]:
    """A spec's ``sinks`` list, each item checked against its type's model."""
    if not isinstance(value, list):
        raise ValueError("expected a list of sinks, each with a 'type'")
    return [_sink(item, i) for i, item in enumerate(value)]


def _sink(item: Any, index: int) -> SinkConfig:
    if isinstance(item, SinkConfig):
        return item
    if not isinstance(item, dict) or "type" not in item:
        raise ValueError(f"sink {index} needs a 'type', one of {', '.join(SINKS.results.names())}")
    try:
        model = SINKS.results.get(str(item["type"]))
    except UnknownNameError as err:
        raise _SinkError(index, err) from None
    try:
        return model.model_validate(item)
    except ValidationError as err:
        raise _SinkError(index, err, model) from None


_KEY_ORDER = ["name", "team", "description", "streams", "sql"]


def _ordered(data: dict) -> dict:
    first = {k: data[k] for k in _KEY_ORDER if k in data}
    return first | {k: v for k, v in data.items() if k not in first}


def parse(data: Any, source: str | None = None) -> DaggerSpec:
    """Validate a mapping (already read from YAML) into a :class:`DaggerSpec`."""
    if not isinstance(data, dict):
        raise SpecError(
            "(top)", "a spec is a YAML mapping of keys such as name, streams, sql", source
        )
    kind = data.get("kind", "dagger")
    if kind != "dagger":
        raise SpecError(
            "kind",
            f"a '{kind}' spec is not a dagger: run it with 'workbench run' or submit it to "
            "the job service (a dagger's spec has no kind, or kind: dagger)",
            source,
        )
    try:
        return DaggerSpec.model_validate({k: v for k, v in data.items() if k != "kind"})
    except ValidationError as err:
        raise _spec_error(err, source) from None


def load(path: str | Path) -> DaggerSpec:
    """Read and validate the spec at ``path``; any problem is one :class:`SpecError`."""

    data = read_yaml(path, what="spec")
    try:
        return parse(data, str(path))
    except SpecError as err:
        if not err.key.startswith(("alerts", "notifiers")):
            raise
        raise located(err, path) from None


def located(err: SpecError, path: str | Path) -> SpecError:
    """``err`` naming the line of ``path`` where its key's value starts."""

    line = key_line(Path(path).read_text(encoding="utf-8"), err.key)
    return SpecError(err.key, err.message, f"{path}, line {line}" if line else str(path))


def _spec_error(
    err: ValidationError, source: str | None, model: type[BaseModel] | None = None
) -> SpecError:
    """One SpecError for every problem of ``err`` (keys of ``model``, a DaggerSpec if None)."""
    problems = [_problem(e, model or DaggerSpec) for e in err.errors()]
    key, message = problems[0]
    if len(problems) > 1:
        message += "".join(f"\n  - spec key '{k}': {m}" for k, m in problems[1:])
    return SpecError(key, message, source)


def _problem(error: Any, model: type[BaseModel]) -> tuple[str, str]:
    loc = list(error["loc"])
    ctx_err = (error.get("ctx") or {}).get("error")
    if isinstance(ctx_err, _SinkError):
        return _sink_problem(loc, ctx_err)
    if isinstance(ctx_err, NotifierProblem):
        return _key([*loc, *ctx_err.key]), f"{str(ctx_err).rstrip('.')}."
    return _key(loc), _explain(error, loc, model)


def _sink_problem(loc: list, err: _SinkError) -> tuple[str, str]:
    prefix = [*loc, err.index]
    if isinstance(err.err, UnknownNameError):
        return _key([*prefix, "type"]), str(err.err)
    found = [
        (_key(prefix + list(sub["loc"])), _explain(sub, list(sub["loc"]), err.model))
        for sub in err.err.errors()
    ]
    key, message = found[0]
    return key, message + "".join(f"\n  - spec key '{k}': {m}" for k, m in found[1:])


def _key(loc: list) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top)"


def _explain(error: Any, loc: list, model: type[BaseModel] | None) -> str:
    kind, msg = error["type"], error["msg"]
    if kind == "extra_forbidden":
        known = _known_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"unknown key.{hint} Known keys here: {', '.join(known)}."
    if kind == "missing":
        return "required key is missing."
    msg = msg.removeprefix("Value error, ")
    if kind != "value_error":
        return f"{msg} (got {clip(repr(error['input']))})."
    return msg if msg.endswith(".") or "\n" in msg else f"{msg}."


def _known_keys(model: type[BaseModel] | None, loc: list) -> list[str]:
    for part in loc:
        if model is None or isinstance(part, int):
            continue
        annotation = model.model_fields[part].annotation
        model = next(
            (
                a
                for a in getattr(annotation, "__args__", (annotation,))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ),
            None,
        )
        if model is None:  # list[...] of models
            args = getattr(annotation, "__args__", ())
            model = next(
                (a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None
            )
    return sorted(f.alias or n for n, f in model.model_fields.items()) if model else []
