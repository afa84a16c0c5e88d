"""Spec kinds: a spec's ``kind`` names how it is parsed, hashed and run.

``dagger`` (the default: every spec without ``kind``) is a :class:`~workbench.spec.DaggerSpec`
run by :class:`~workbench.streaming.job.StreamingJob`; ``quality`` a
:class:`~workbench.quality.spec.QualitySpec` run by
:class:`~workbench.quality.job.QualityJob`. Each kind registers a :class:`Kind`; callers
ask :data:`KINDS` (``parse``, ``load``, ``job_class``, ``shape_hash``, ``check``) instead of
branching on it (a :class:`workbench.plugins.Plugins`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from workbench.exceptions import SpecError
from workbench.plugins import Plugins
from workbench.yamlsafe import read_yaml

if TYPE_CHECKING:
    from workbench.quality.spec import QualitySpec
    from workbench.schemas import SchemaRegistry
    from workbench.spec import DaggerSpec
    from workbench.streaming.job import StreamingJob

    AnySpec: TypeAlias = "DaggerSpec | QualitySpec"


def _named(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Kind:
    """One kind of spec, by dotted ``module:name`` paths (imported when asked): its spec
    module (with ``parse(data, source)`` and ``load(path)``), its job class, its shape
    hash (equal hashes may share a checkpoint), its names check (``check(spec, registry,
    before)``: what a schema registry decides without Spark) and its ``workbench validate``
    check (a report with ``render(show_sql)``)."""

    name: str
    spec_module: str
    job: str
    shape_hash: str
    names_check: str
    check: str

    def parse(self, data: Any, source: str | None) -> AnySpec:
        return _named(f"{self.spec_module}:parse")(data, source)  # type: ignore[no-any-return]

    def load(self, path: str | Path) -> AnySpec:
        return _named(f"{self.spec_module}:load")(path)  # type: ignore[no-any-return]


class Kinds(Plugins[Kind]):
    """The registered kinds by name; :data:`KINDS` is the one instance."""

    def __init__(self) -> None:
        super().__init__("kind", unknown=_unknown)

    def of(self, data: Any) -> Kind:
        """The kind of a spec mapping (``dagger`` when it names none)."""
        return self.get(str(data.get("kind", "dagger") if isinstance(data, dict) else "dagger"))

    def of_spec(self, spec: AnySpec) -> Kind:
        return self.get(getattr(spec, "kind", "dagger"))

    def parse(self, data: Any, source: str | None = None) -> AnySpec:
        """A spec of any kind from a mapping read from YAML."""
        return self.of(data).parse(data, source)

    def load(self, path: str | Path) -> AnySpec:
        """The spec file at ``path``, of any kind."""

        return self.of(read_yaml(path, what="spec")).load(path)

    def job_class(self, spec: AnySpec) -> type[StreamingJob]:
        return _named(self.of_spec(spec).job)  # type: ignore[no-any-return]

    def shape_hash(self, spec: AnySpec) -> str:
        return str(_named(self.of_spec(spec).shape_hash)(spec))

    def check_names(
        self, spec: AnySpec, registry: SchemaRegistry, before: SchemaRegistry | None = None
    ) -> None:
        """Refuse (SpecError, SqlError) a spec naming what ``registry`` lacks (``before``:
        the set the job runs on today, whose fields its SQL may name)."""
        _named(self.of_spec(spec).names_check)(spec, registry, before)

    def check(self, spec: AnySpec) -> Any:
        """What ``workbench validate`` checks of ``spec`` beyond its keys (its report)."""
        return _named(self.of_spec(spec).check)(spec)


def _unknown(name: str, known: list[str]) -> SpecError:
    return SpecError("kind", f"unknown kind '{name}'; one of {', '.join(known)}")


KINDS = Kinds()
for _kind in (
    Kind(
        "dagger",
        "workbench.spec",
        "workbench.streaming.job:StreamingJob",
        "workbench.streaming.checkpoints:spec_hash",
        "workbench.streaming.validate:check_names",
        "workbench.streaming.validate:check",
    ),
    Kind(
        "quality",
        "workbench.quality.spec",
        "workbench.quality.job:QualityJob",
        "workbench.quality.spec:shape_hash",
        "workbench.quality.spec:check_names",
        "workbench.quality.validate:check",
    ),
):
    KINDS.add(_kind.name, _kind)


def kind_of(spec: AnySpec) -> str:
    """The name of ``spec``'s kind (``dagger``, ``quality``), as logs and messages say it."""
    return KINDS.of_spec(spec).name
