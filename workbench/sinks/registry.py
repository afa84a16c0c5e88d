"""The sink registry: a sink type's name maps to its config model, which opens its writer.

A sink module defines a pydantic ``Config`` (with ``type: Literal[name]``) and calls
``SINKS.add(name, Config)``. Third-party sinks register through the
``workbench.sinks`` entry-point group (:class:`workbench.plugins.Plugins`).

A sink's :meth:`SinkConfig.open` returns its :class:`SinkWriter`; the job hands it
every micro-batch with its batch id, and the writer must make a replayed batch id
harmless (idempotent points, transactions, Spark's file-sink log). Batch ids restart at
0 with a new checkpoint (``ctx.query_id`` changes), so a writer that remembers batch ids
keys them by query. ``write`` returns the rows it wrote: an int, or :class:`Written`
to also say how many rows of a replayed batch it skipped. One :class:`SinkContext` is
made per job start and shared by all its writers; each writer also gets its position
in the spec's sinks (``index``), which keeps its identity (a Kafka transactional id)
stable across restarts.

Dead letters (records that did not decode) go to sinks of the same registry: a
:class:`LetterSinkConfig` subclass registered with ``SINKS.add`` is a dead-letter type
(the spec's ``dead_letter.type``), made from the spec by :meth:`LetterSinkConfig.for_job`
and opened with :meth:`LetterSinkConfig.open_letters`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from workbench.exceptions import SinkError
from workbench.plugins import Plugins

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from workbench.schemas import SchemaRegistry
    from workbench.spec import DaggerSpec, DeadLetterSpec
    from workbench.streaming.deadletters import Letters

#: the modules registering the built-in sink types
BUILTIN = tuple(
    f"workbench.sinks.{name}"
    for name in ("influx", "kafka", "parquet", "delta", "log", "dead_parquet", "dead_kafka")
)


@dataclass(frozen=True)
class SinkContext:
    """What a sink needs to know about the job writing to it; one per job start, shared by
    every writer of the job."""

    spark: SparkSession
    job: str
    checkpoint: Path  # the job's checkpoint folder
    registry: SchemaRegistry
    output_mode: str  # "append" (final windows) or "update" (early updates)
    trigger: dict[str, Any]  # DataStreamWriter.trigger(**trigger)

    @functools.cached_property
    def query_id(self) -> str:
        """The id Spark keeps for the job's checkpointed query (stable across restarts;
        a new checkpoint gets a new one). Read at the first micro-batch."""
        import json

        return str(json.loads((self.checkpoint / "sinks" / "metadata").read_text())["id"])


@dataclass(frozen=True)
class Written:
    """What a writer did with one micro-batch: rows written, rows of a replay skipped.
    ``None`` for either means all of the batch's rows, which the job counts (a writer that
    writes the batch whole need not run a Spark job to count it)."""

    rows: int | None
    skipped: int | None = 0

    @classmethod
    def of(cls, result: int | Written) -> Written:
        return result if isinstance(result, Written) else cls(int(result))

    def counted(self, batch_rows: Callable[[], int]) -> tuple[int, int]:
        """(rows, skipped), ``None`` counted as ``batch_rows()``, the batch's rows."""
        rows = batch_rows() if self.rows is None else self.rows
        skipped = batch_rows() if self.skipped is None else self.skipped
        return rows, skipped


class SinkWriter(Protocol):
    """Writes micro-batches. A writer whose :meth:`write` computes the batch in one Spark job
    and reads it no more (it returns ``Written(None)`` rather than counting) says so with a
    class attribute ``one_pass = True``: when it is a job's only reader, the job hands it the
    micro-batch uncached, so the batch is computed once, by the write; one that can also be
    the streaming query's own sink (:class:`workbench.sinks.streamed.StreamedWriter`) is
    written by the query directly, without ``foreachBatch``."""

    def write(self, batch: DataFrame, batch_id: int) -> int | Written:
        """Write one micro-batch; returns the rows written (0 for a replay it skipped)."""
        ...

    def close(self) -> None: ...


class LetterWriter(Protocol):
    def write(self, letters: Letters, batch_id: int) -> int:
        """Write one micro-batch's dead letters (:class:`workbench.streaming.deadletters.Letters`:
        iterate ``letters.rows()``, or write ``held`` and the ``spilled`` DataFrame apart);
        returns how many it wrote (0 for a replay it skipped)."""
        ...

    def close(self) -> None: ...


class SinkConfig(BaseModel):
    """Common base: unknown keys are errors, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str

    def describe(self) -> str:
        return self.type

    def target(self) -> str | None:
        """What this sink writes, as two jobs writing it would collide on (a folder, a
        measurement, a topic), said for a person; None when jobs may share it (a log)."""
        return None

    def check(self, schema: StructType) -> None:
        """Raise :class:`~workbench.exceptions.SinkError` if rows of ``schema`` (the
        query's result) cannot be written to this sink; ``validate`` calls it."""

    def require_column(self, schema: StructType, name: str, key: str, purpose: str) -> None:
        """A :class:`~workbench.exceptions.SinkError` unless the query selects ``name``
        (the value of this sink's ``key``), which the sink needs ``purpose``."""

        columns = [f.name for f in schema.fields]
        if name not in columns:
            raise SinkError(
                self.describe(),
                f"the query has no column '{name}' ({key}) {purpose}: select it in the SQL "
                f"or name another one in '{key}'. Columns: {', '.join(columns)}",
            )

    def session_conf(self) -> dict[str, str]:
        """Spark settings a session made for a job with this sink must start with (e.g. a
        table format's jars and SQL extension); none by default."""
        return {}

    def open(self, ctx: SinkContext, index: int) -> SinkWriter:
        """The writer of this sink, the ``index``-th of the job's sinks."""
        raise NotImplementedError(f"sink '{self.type}' has no batch writer")

    def with_bootstrap(self, servers: str) -> SinkConfig:
        """This sink with its Kafka address set to ``servers`` (unchanged if it has none)."""
        return self


class LetterSinkConfig(SinkConfig):
    """A sink of dead letters: made from the spec's ``dead_letter`` (its defaults may
    depend on the job), it writes plain rows, one folder or transaction per micro-batch."""

    @classmethod
    def for_job(cls, dead: DeadLetterSpec, spec: DaggerSpec) -> LetterSinkConfig:
        raise NotImplementedError(f"dead-letter sink '{cls.__name__}' has no for_job")

    def open_letters(self, ctx: SinkContext) -> LetterWriter:
        raise NotImplementedError(f"dead-letter sink '{self.type}' has no writer")


class SinkRegistry:
    """Sink types by name, two extension points filled by the same modules and entry-point
    group: result sinks (:attr:`results`) and dead-letter sinks (:attr:`letters`, the
    :class:`LetterSinkConfig` subclasses)."""

    def __init__(self) -> None:
        self.results = Plugins[type[SinkConfig]]("sink type", BUILTIN, "workbench.sinks")
        self.letters = Plugins[type[LetterSinkConfig]](
            "dead-letter type", BUILTIN, "workbench.sinks"
        )

    def add(self, name: str, config: type[SinkConfig]) -> None:
        if issubclass(config, LetterSinkConfig):
            self.letters.add(name, config)
        else:
            self.results.add(name, config)

    def letters_sink(self, spec: DaggerSpec) -> LetterSinkConfig:
        """The dead-letter sink of ``spec`` (its ``dead_letter``, defaults filled in)."""
        return self.letters.get(spec.dead_letter.type).for_job(spec.dead_letter, spec)


SINKS = SinkRegistry()
