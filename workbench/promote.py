"""Promote a notebook to a production job: papermill, record, parity check, submission.

:func:`prepare` executes the notebook with papermill (a separate process) in a fresh kernel
(the notebook's own kernel unless ``kernel`` names another) with ``$WORKBENCH_PROMOTE_DIR``
in the kernel's environment, so :mod:`workbench.notebook` records the spec, the last
preview's samples and rows (:mod:`workbench.notebook.promoting`) and no stream starts.
The executed notebook is the version's record (its bytes and sha256). Then the **parity
check**: the saved samples run through the production plan with the promoted spec
(:func:`workbench.lab.replay.replay_samples`, i.e. ``workbench replay SPEC --sample ...``) and
the rows must equal the preview's (:mod:`workbench.lab.parity`); a difference raises
:class:`~workbench.exceptions.ParityError` listing the rows. A notebook that ran no preview
is refused (:class:`~workbench.exceptions.PromoteError`): the check needs one.

:func:`promote` then submits the :class:`Promotion` to the job service
(:class:`workbench.client.rest.ServiceClient`), which starts the job.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from workbench.exceptions import ParityError, PromoteError, UnknownNameError, clip
from workbench.lab import parity
from workbench.paths import PROMOTE_DIR_ENV, subdir
from workbench.runtime.spark import session
from workbench.spec import load, parse

if TYPE_CHECKING:
    from workbench.spec import DaggerSpec
from workbench.settings import child_env

Emit = Callable[[str], None] | None

#: The record folder's files, which a notebook writes while papermill runs it
#: (:mod:`workbench.notebook.promoting`) and the promote process reads.
SPEC_FILE = "spec.yaml"
ROWS_FILE = "preview.jsonl"
PREVIEW_FILE = "preview.json"
SAMPLES_DIR = "samples"
REPLAY_ROWS = "replay.jsonl"
REPLAY_FILE = "replay.json"
PREVIEW_SPEC_NAME = "preview"  # the name of a preview's own spec (bare SQL, no wb.use)
#: The cell tag of scratch work: promote does not run a cell tagged so (its record keeps it,
#: as a raw cell), so a scratch cell that raises does not stop the promotion.
SCRATCH_TAG = "scratch"


class _Loader(yaml.SafeLoader):
    """YAML without implicit timestamps: ``-p start 2026-01-01T00:00:00`` is text."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parameter(text: str) -> Any:
    """A papermill parameter's value from its text: YAML (``0``, ``[{type: log}]``), with
    timestamps kept as text; text that is not YAML stays text."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError:
        return text


@dataclass
class Promotion:
    """A notebook ready for the job service: the spec, the executed notebook, parity."""

    spec: DaggerSpec
    notebook_bytes: bytes = field(repr=False)
    sha256: str
    parity: dict[str, Any]
    timings: dict[str, float]
    workdir: Path

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def spec_yaml(self) -> str:
        """The spec as the job service receives it."""
        return self.spec.to_yaml()


def prepare(
    notebook: str | Path,
    *,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    kernel: str | None = None,
    workdir: str | Path | None = None,
    emit: Emit = None,
) -> Promotion:
    """Execute ``notebook`` in promote mode and check parity; ``name`` renames the dagger
    (default: the spec's name), ``params`` are papermill parameters, ``emit`` gets a line
    per step as it ends."""
    notebook = Path(notebook)
    if not notebook.is_file():
        raise PromoteError(f"{notebook}: no such notebook file")
    params = dict(params or {})
    check_parameters(notebook, params)
    work = Path(workdir) if workdir else _default_workdir(notebook)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    executed, skipped = execute(notebook, work, params, kernel)
    papermill_s = time.perf_counter() - t0
    scratch = f"; {skipped} cell(s) tagged {SCRATCH_TAG} skipped" if skipped else ""
    _say(emit, f"papermill: executed {notebook.name} in promote mode ({papermill_s:.1f}s{scratch})")
    spec = recorded_spec(work / "record", name, notebook)
    t1 = time.perf_counter()
    result = check_parity(spec, work / "record", work / "replay.jsonl")
    parity_s = time.perf_counter() - t1
    result["seconds"] = round(parity_s, 3)
    where = "by the kernel after the preview" if result["replayed_by"] == "kernel" else "here"
    _say(emit, f"parity: {result['rows']} preview rows == {result['replay_rows']} replay rows "
               f"over the sample offsets (replayed {where}: {result['replay_s']:.1f}s; "
               f"compared: {parity_s:.1f}s)")  # fmt: skip
    data = executed.read_bytes()
    return Promotion(
        spec, data, hashlib.sha256(data).hexdigest(), result,
        {"papermill_s": round(papermill_s, 3), "parity_s": round(parity_s, 3)}, work,
    )  # fmt: skip


def promote(
    notebook: str | Path,
    team: str,
    *,
    name: str | None = None,
    cluster: str | None = None,
    params: Mapping[str, Any] | None = None,
    server: str | None = None,
    token: str | None = None,
    kernel: str | None = None,
    emit: Emit = None,
) -> dict[str, Any]:
    """:func:`prepare`, then submit to the job service (a new job, or a new version of the
    job of that name); returns the job as the service shows it."""
    promotion = prepare(notebook, name=name, params=params, kernel=kernel, emit=emit)
    return submit(promotion, team, cluster=cluster, server=server, token=token, emit=emit)


def submit(
    promotion: Promotion,
    team: str,
    *,
    cluster: str | None = None,
    server: str | None = None,
    token: str | None = None,
    emit: Emit = None,
    schema_version: int | None = None,
) -> dict[str, Any]:
    """Submit the prepared ``promotion``; the version is pinned to ``schema_version`` (the
    latest published by default: :mod:`workbench.jobs.schema_pins`)."""
    from workbench.client.rest import ServiceClient

    t0 = time.perf_counter()
    promotion.spec = owned_by(promotion.spec, team)
    job = ServiceClient(server, token).submit(
        name=promotion.name,
        team=team,
        spec_yaml=promotion.spec_yaml,
        cluster=cluster,
        notebook=promotion.notebook_bytes,
        parity=promotion.parity,
        schema_version=schema_version,
    )
    promotion.timings["submit_s"] = round(time.perf_counter() - t0, 3)
    _say(emit, f"submit: {promotion.name} for team {team} ({promotion.timings['submit_s']:.1f}s)")
    return job


def owned_by(spec: DaggerSpec, team: str) -> DaggerSpec:
    """``spec`` with ``team`` as its team (the job's owner; the plan does not change)."""
    return spec.model_copy(update={"team": team})  # any text is a team: nothing to validate


# --- papermill ------------------------------------------------------------------------


def execute(
    notebook: Path, work: Path, params: dict[str, Any], kernel: str | None
) -> tuple[Path, int]:
    """Run papermill on ``notebook`` (in its folder) with the record folder ``work/record``
    in the kernel's environment, its scratch cells left out (:func:`without_scratch`);
    returns the executed notebook and how many cells were left out."""
    record = work / "record"
    record.mkdir(exist_ok=True)
    out = work / notebook.name
    (work / "input").mkdir(exist_ok=True)
    source, skipped = without_scratch(notebook, work / "input" / notebook.name)
    (work / "params.json").write_text(json.dumps(params, indent=2), encoding="utf-8")
    command = [
        sys.executable, "-m", "papermill", str(source), str(out),
        "-f", str(work / "params.json"), "--cwd", str(notebook.resolve().parent),
        "--no-progress-bar", "--log-level", "WARNING", *(["-k", kernel] if kernel else []),
    ]  # fmt: skip
    env = child_env({PROMOTE_DIR_ENV: str(record.resolve())})
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise PromoteError(_failure(notebook, out, done.stderr))
    return out, skipped


def without_scratch(notebook: Path, out: Path) -> tuple[Path, int]:
    """``notebook`` with each code cell tagged :data:`SCRATCH_TAG` made a raw cell (kept,
    never run), written to ``out``; and how many there were."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    skipped = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and SCRATCH_TAG in cell.metadata.get("tags", []):
            nb.cells[i] = nbformat.v4.new_raw_cell(cell.source, metadata=cell.metadata)
            skipped += 1
    nbformat.write(nb, out)
    return out, skipped


def check_parameters(notebook: Path, params: Mapping[str, Any]) -> None:
    """Every parameter is one of the notebook's (its ``parameters`` cell)."""
    from papermill import inspect_notebook

    known = inspect_notebook(str(notebook))
    for key in params:
        if key not in known:
            raise UnknownNameError("parameter", key, known, where=f"of {notebook.name}")


def _failure(notebook: Path, out: Path, stderr: str) -> str:
    """Which cell failed and why (from the executed notebook), else papermill's words."""
    import nbformat

    if out.exists():
        nb = nbformat.read(out, as_version=4)
        added = {"injected-parameters", "papermill-error-cell-tag"}  # papermill's own cells
        ours = [c for c in nb.cells if not added & set(c.metadata.get("tags", []))]
        for number, cell in enumerate(ours, 1):  # numbered as in the user's notebook
            for o in cell.get("outputs", []):
                if o.get("output_type") == "error":
                    first = clip(cell.source.strip().splitlines()[0], 60)
                    return (
                        f"{notebook.name} failed under papermill in the cell `{first}` (cell "
                        f"{number}): {o['ename']}: {clip(o['evalue'], 2000)} (the executed "
                        f"notebook: {out}). Fix the cell; or, if it is scratch work the job "
                        f"does not need, give it the cell tag `{SCRATCH_TAG}` (JupyterLab: "
                        "the property inspector, Common Tools > Cell Tag) and promote skips it."
                    )
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    hint = " (install the kernel: workbench kernel install)" if "No such kernel" in stderr else ""
    return f"papermill could not run {notebook.name}{hint}:\n{tail}"


def _default_workdir(notebook: Path) -> Path:

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    return subdir("promote") / f"{notebook.stem}-{stamp}"


# --- the record and the parity check ---------------------------------------------------


def recorded_spec(record: Path, name: str | None, notebook: Path | None = None) -> DaggerSpec:
    """The spec the notebook recorded, validated; renamed to ``name`` when given, else to
    ``notebook``'s file name when the notebook used no spec (:func:`_name_of`)."""

    path = record / SPEC_FILE
    if not path.exists():
        raise PromoteError(
            "the notebook recorded no dagger spec: call wb.use(spec) (or preview SQL over a "
            "sample) in it, then promote again"
        )
    spec = load(path)
    name = name or (_name_of(notebook, spec) if notebook else None)
    if name is None:
        return spec
    # the fields as they are (a model_dump keeps only the base fields of each sink)
    return parse(dict(spec) | {"name": name})


def _name_of(notebook: Path, spec: DaggerSpec) -> str | None:
    """None (the spec's own name), or the notebook's file name when the notebook used no
    spec, only a preview of SQL (whose spec is named "preview")."""
    import re

    if spec.name != PREVIEW_SPEC_NAME:
        return None
    return re.sub(r"[^A-Za-z0-9_-]+", "-", notebook.stem).strip("-_") or None


def check_parity(spec: Any, record: Path, out: Path) -> dict[str, Any]:
    """The saved samples through the production plan (``replay --sample``) against the
    preview's rows; a :class:`ParityError` when they differ. The replay the kernel made
    right after the preview serves when its spec is the final one."""
    options = _preview_options(record)
    replay = _kernel_replay(record)
    if replay is None:
        replay = _replay(spec, record, out)
    shown = parity.read_jsonl((record / ROWS_FILE).read_text(encoding="utf-8"))
    replayed = parity.read_jsonl(replay["path"].read_text(encoding="utf-8"))
    diff = parity.compare(shown, replayed, subset=bool(options.get("truncated")))
    if diff:
        raise ParityError(
            f"parity check failed: the preview's rows differ from the production plan's over "
            f"the same sample offsets ({len(shown)} preview rows, {len(replayed)} replay rows); "
            f"promotion refused.\n{diff.describe()}\n"
            "A query whose result depends on more than its input (rand(), current_timestamp(), "
            "a UDF with state) cannot pass; otherwise the preview and the job disagree: report "
            f"it with the record in {record.parent}.",
            diff.only_preview[: parity.SHOWN],
            diff.only_replay[: parity.SHOWN],
        )
    return {
        "status": "passed",
        "rows": len(shown),
        "replay_rows": len(replayed),
        "tables": options["tables"],
        "undecodable": replay["undecodable"],
        "replayed_by": replay["by"],
        "replay_s": replay["seconds"],
    }


def _kernel_replay(record: Path) -> dict[str, Any] | None:
    """The kernel's replay (:mod:`workbench.notebook.promoting`) if it ran with the final
    spec and without error."""
    path = record / REPLAY_FILE
    if not path.exists():
        return None
    info = json.loads(path.read_text(encoding="utf-8"))
    final = (record / SPEC_FILE).read_text(encoding="utf-8")
    if "error" in info or info["spec_yaml"] != final:
        return None
    return info | {"path": record / REPLAY_ROWS, "by": "kernel"}


def _replay(spec: Any, record: Path, out: Path) -> dict[str, Any]:
    from workbench.lab.replay import replay_samples

    t0 = time.perf_counter()
    samples = sorted((record / SAMPLES_DIR).glob("*.json"))
    done = replay_samples(session(), samples, out, spec=spec)
    seconds = round(time.perf_counter() - t0, 3)
    return {"path": out, "undecodable": done.undecodable, "by": "promote", "seconds": seconds}


def _preview_options(record: Path) -> dict[str, Any]:
    path = record / PREVIEW_FILE
    if not path.exists():
        raise PromoteError(
            "the notebook ran no preview, so there is nothing to check the production plan "
            "against: add a preview cell (wb.sample(TABLE) then wb.preview(), or a %%dagger "
            "cell) and promote again"
        )
    options: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return options


def _say(emit: Emit, text: str) -> None:
    if emit is not None:
        emit(text)
