"""The notebooks we ship, built from code: the "new dagger" template (``workbench new``)
and the example notebooks. ``templates/`` and ``notebooks/`` hold their output;
``python -m workbench.notebook.scaffold`` writes them again (a test checks they are current).

Every notebook has a papermill ``parameters`` cell, runs top to bottom on the
``dagger-workbench`` kernel against a Kafka broker (the local one by default) and,
given ``result_path``, saves its preview rows there as JSON lines.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.exceptions import WorkbenchError

KERNEL = {
    "name": "dagger-workbench",
    "display_name": "Dagger Workbench (PySpark)",
    "language": "python",
}
TEMPLATE = "new-dagger.ipynb"
#: a dagger name: it becomes the notebook's file name, the job's default name and its
#: streams' consumer group (``dagger-NAME``)
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,62}")


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a dagger name (None when it is one)."""
    if NAME.fullmatch(name):
        return None
    return (
        f"'{name[:80]}' is not a dagger name: use letters, digits, '-' and '_', starting "
        "with a letter (at most 63)"
    )


@dataclass(frozen=True)
class Example:
    """An example notebook: a bundled dagger previewed over seeded demo events."""

    file: str
    dagger: str  # bundled dagger name (workbench/data/daggers)
    kind: str  # generator kind of its events
    title: str
    story: str
    metric: str
    cell: str | None = None  # column of S2 cells: the notebook draws a map


EXAMPLES = (
    Example(
        "surge_pricing.ipynb",
        "surge-pricing",
        "bookings",
        "Surge pricing: bookings per S2 cell per minute",
        "New bookings per S2 level-13 cell (~1 km²), vehicle type and minute: the demand "
        "side of surge pricing.",
        "bookings",
        "tag_s2id",
    ),
    Example(
        "driver_supply.ipynb",
        "driver-supply",
        "driver_pings",
        "Driver supply: available drivers per S2 cell per minute",
        "Distinct available drivers (`DistinctCount(driver_id)`) per S2 level-13 cell, "
        "vehicle type and minute, from driver location pings: the supply side of surge.",
        "available_drivers",
        "tag_s2id",
    ),
    Example(
        "api_health.ipynb",
        "api-health",
        "api_logs",
        "API health: error rate and latency percentiles per service",
        "Requests, 5xx error rate and p50/p95/p99 latency per service and minute, from the "
        "API gateway logs: what on-call dashboards and alerts read.",
        "error_rate",
    ),
)


def _md(text: str) -> Any:
    import nbformat

    return nbformat.v4.new_markdown_cell(text.strip())


def _code(text: str, *tags: str) -> Any:
    import nbformat

    cell = nbformat.v4.new_code_cell(text.strip())
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def _notebook(cells: list[Any]) -> Any:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = KERNEL
    nb.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(nb.cells):  # stable ids: regenerating changes nothing
        cell["id"] = f"cell-{index}"
    return nb


def example(ex: Example) -> Any:
    """The notebook of one example."""
    from workbench.notebook.examples import bundled

    spec = bundled(ex.dagger)
    stream = spec.streams[0]
    cells = [
        _md(
            f"# {ex.title}\n\n{ex.story}\n\nRun it top to bottom: it starts the local Kafka "
            "broker if `bootstrap_servers` is `None`, publishes seeded demo events to its own "
            "topic, samples exactly the events it published (whatever else the topic holds) "
            "and previews the dagger over the sample.\n\nPromote it to a production job as it is: "
            f"`workbench promote notebooks/{ex.file} --team TEAM` (docs/notebooks.md, Promote)."
        ),  # fmt: skip
        _code(
            f"""
bootstrap_servers = None  # None: the local broker (workbench dev kafka up)
topic = {example_topic(ex)!r}  # this example's own topic
events = 3000  # demo events to publish first (0: sample what is in the topic)
seed = 7
start = None  # event time of the first demo event (ISO); None: two hours ago
sample_last = 5000  # records per partition sampled when events is 0
result_path = None  # save the preview rows here (JSON lines)
sinks = None  # the job's sinks: None keeps the bundled spec's; a list of sink dicts replaces them
""",
            "parameters",
        ),
        _code(
            f"""
import workbench.notebook as wb
from workbench.notebook import examples

bootstrap = examples.kafka(bootstrap_servers)
if events:
    published = examples.demo_events(
        bootstrap, {ex.kind!r}, topic=topic, events=events, seed=seed, start=start
    )
    print(f"published {{published}}")
wb.connect(bootstrap)
spec = wb.use(examples.bundled({ex.dagger!r}, topic=topic, sinks=sinks))
wb.streams()
"""
        ),
        _md("The stream's message, as the dagger SQL sees it:"),
        _code(f"wb.schema({stream.message!r})"),
        _md(
            "The sample: exactly the events published above (their offsets), so the preview "
            "never mixes in other events of the topic, from another run or another time."
        ),
        _code(
            f"""
if events:
    sample = wb.sample({stream.table!r}, offsets=published.offsets)
else:
    sample = wb.sample({stream.table!r}, last=sample_last)
sample
"""
        ),
        _md("The dagger SQL, previewed over the sample (a batch: every window, closed or not):"),
        _code("%%dagger\n" + spec.sql.strip()),
        _code(f"preview = wb.last_preview()\npreview.chart({ex.metric!r})"),
    ]
    if ex.cell:
        cells.append(
            _code(
                "from workbench import atlas\n\n"
                f"atlas.choropleth(preview, cell={ex.cell!r}, metric={ex.metric!r}, "
                'service_area="jakarta")'
            )
        )
    cells.append(_code(_SAVE))
    return _notebook(cells)


def example_topic(ex: Example) -> str:
    """The topic an example publishes to by default: its own, never the demo's."""
    return f"example-{ex.dagger}"


_SAVE = """
if result_path:
    preview.rows.to_json(result_path, orient="records", lines=True, date_format="iso")
preview.counts
"""


def template(name: str = "my-dagger") -> Any:
    """The "new dagger" notebook: edit the SQL and preview it; ``workbench promote`` then
    makes it a production job as it is (the stream never runs in the notebook)."""
    from workbench.notebook.examples import bundled

    surge = bundled("surge-pricing")
    streams = [s.model_dump(mode="json", exclude_defaults=True) for s in surge.streams]
    for stream in streams:  # the job's own consumer group, not the example's
        stream["group_id"] = f"dagger-{name}"
    cells = [
        _md(f"""
# Dagger `{name}`

1. Describe the streams and sinks in the **parameters** cell below.
2. Write the dagger SQL in the `SQL` cell, then run the notebook: it samples each stream
   and previews the SQL over the samples.
3. Promote it: `workbench promote {name}.ipynb --team TEAM` runs this notebook again in a
   fresh kernel, checks that the production plan gives the preview's rows over the same
   samples, and the job service starts the streaming job with these sinks.
"""),
        _code(
            f"""
name = {name!r}
streams = {json.dumps(streams, indent=4)}
sinks = [{{"type": "log"}}]
bootstrap_servers = None  # None: each stream's own servers
sample_last = 1000  # records per partition in each sample
result_path = None  # save the preview rows here (JSON lines)
""",
            "parameters",
        ),
        _code(f'SQL = """\n{surge.sql.strip()}\n"""'),
        _code(
            """
import workbench.notebook as wb
from workbench.spec import parse

spec = wb.use(parse({"name": name, "streams": streams, "sinks": sinks, "sql": SQL,
                     "watermark_delay": "10s"}))
wb.connect(bootstrap_servers)
print(spec.to_yaml())
"""
        ),
        _code(
            """
for stream in spec.streams:
    wb.sample(stream.table, last=sample_last)
preview = wb.preview()
if result_path:
    preview.rows.to_json(result_path, orient="records", lines=True, date_format="iso")
preview
"""
        ),
    ]
    return _notebook(cells)


def write(nb: Any, path: Path) -> Path:
    import nbformat

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return path


def for_this_kernel(nb: Any) -> Any:
    """``nb`` with the ``language_info`` the workbench kernel reports (it runs on this
    Python). JupyterLab writes the kernel's into an open notebook once the kernel starts:
    a notebook made with less would show modified before anyone edits it. The shipped
    files keep the short form (they do not depend on the Python that wrote them)."""
    import copy

    from ipykernel.ipkernel import IPythonKernel

    nb.metadata["language_info"] = copy.deepcopy(IPythonKernel.language_info)
    return nb


def new(name: str, folder: str | Path = ".") -> Path:
    """``workbench new NAME``: ``NAME.ipynb`` from the template (never overwrites)."""

    problem = name_problem(name)
    if problem:
        raise WorkbenchError(f"{problem}.")
    path = Path(folder) / f"{name}.ipynb"
    if path.exists():
        raise WorkbenchError(f"{path} exists: choose another name or remove it")
    return write(for_this_kernel(template(name)), path)


def generated(root: Path) -> dict[Path, Any]:
    """Every shipped notebook, by its path under ``root`` (the repository)."""
    out = {root / "templates" / TEMPLATE: template()}
    out.update({root / "notebooks" / ex.file: example(ex) for ex in EXAMPLES})
    return out


if __name__ == "__main__":  # python -m workbench.notebook.scaffold [ROOT]
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for path, nb in generated(root).items():
        print(f"wrote {write(nb, path)}")
