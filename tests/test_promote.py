"""Promote, as users run it: papermill on the workbench kernel against the real broker, the
record the notebook leaves in promote mode, and the parity check over the sample offsets
(``replay --sample`` through Spark's Kafka source and the job's JVM decoder)."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path

import nbformat
import pytest
import yaml
from cli_runner import workbench
from geo_reference import surge_windows
from streaming import START, SURGE_SQL, surge_rows
from test_notebooks import events_of

from workbench.exceptions import ParityError, PromoteError, SpecError, StreamInPromoteError
from workbench.lab.parity import read_jsonl
from workbench.notebook.examples import demo_events
from workbench.promote import check_parity, prepare, recorded_spec
from workbench.spec import parse

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
EVENTS, SEED = 1200, 13


def example_params(broker, topic: str, **more) -> dict:
    return {"bootstrap_servers": broker.bootstrap, "topic": topic, "events": EVENTS,
            "seed": SEED, "start": START.isoformat(), **more}  # fmt: skip


def code_notebook(path: Path, *cells: str, parameters: str = "bootstrap = None") -> Path:
    """A notebook on the workbench kernel: a parameters cell, then ``cells``."""
    from workbench.notebook.scaffold import KERNEL

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNEL
    first = nbformat.v4.new_code_cell(parameters)
    first.metadata["tags"] = ["parameters"]
    nb.cells = [first, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, path)
    return path


USE_SURGE = """
import workbench.notebook as wb
from workbench.notebook import examples

wb.connect(bootstrap)
spec = wb.use(examples.bundled("surge-pricing", topic=topic))
"""


def test_surge_pricing_notebook_promotes_as_it_is(spark, kafka_broker, workbench_kernel, tmp_path):
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    sinks = [{"type": "parquet", "path": str(tmp_path / "out")}]
    got = prepare(
        ROOT / "notebooks" / "surge_pricing.ipynb",
        params=example_params(kafka_broker, topic, sinks=sinks),
        kernel=workbench_kernel,
        workdir=tmp_path / "work",
    )
    spec = parse(yaml.safe_load(got.spec_yaml))
    assert got.name == spec.name == "surge-pricing"
    assert spec.streams[0].topics == [topic]
    assert spec.streams[0].bootstrap_servers == kafka_broker.bootstrap  # wb.connect applied
    assert [s.type for s in spec.sinks] == ["parquet"]  # the sinks parameter
    assert spec.sql.strip() == SURGE_SQL.strip()  # the %%dagger cell's SQL
    assert got.parity["status"] == "passed"
    assert got.parity["rows"] == got.parity["replay_rows"] > 0
    assert got.timings["papermill_s"] > 0 and got.timings["parity_s"] > 0
    assert got.sha256 == hashlib.sha256(got.notebook_bytes).hexdigest()
    executed = nbformat.reads(got.notebook_bytes.decode(), as_version=4)
    assert executed.metadata.papermill.parameters["topic"] == topic
    record = tmp_path / "work" / "record"
    preview = read_jsonl((record / "preview.jsonl").read_text())
    assert surge_rows(preview) == surge_windows(events_of("bookings", EVENTS, SEED))
    assert json.loads((record / "samples" / "booking.json").read_text())["offsets"]
    assert got.parity["replayed_by"] == "kernel"  # right after the preview, Spark warm

    (record / "replay.json").unlink()  # as when the spec changed after the last preview
    again = check_parity(spec, record, tmp_path / "again.jsonl")
    assert again["replayed_by"] == "promote" and again["replay_rows"] == got.parity["rows"]


def test_template_promotes_as_it_is(kafka_broker, workbench_kernel, tmp_path):
    from workbench.cli.main import main

    assert main(["new", "hotspots", "--dir", str(tmp_path)]) == 0
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=600, seed=SEED,
                start=START)  # fmt: skip
    streams = [{"table": "booking", "message": "esb.booking.BookingLogMessage",
                "topics": [topic], "starting_offsets": "earliest"}]  # fmt: skip
    got = prepare(
        tmp_path / "hotspots.ipynb",
        name="hotspots-prod",
        params={"streams": streams, "bootstrap_servers": kafka_broker.bootstrap},
        kernel=workbench_kernel,
        workdir=tmp_path / "work",
    )
    spec = parse(yaml.safe_load(got.spec_yaml))
    assert got.name == spec.name == "hotspots-prod"
    assert [s.type for s in spec.sinks] == ["log"]
    assert got.parity["status"] == "passed" and got.parity["rows"] > 0


def test_a_preview_that_differs_from_the_production_plan_refuses_promotion(
    kafka_broker, workbench_kernel, tmp_path
):
    """rand() draws anew in every plan: the preview's rows cannot be the replay's."""
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=300, seed=SEED,
                start=START)  # fmt: skip
    notebook = code_notebook(
        tmp_path / "noisy.ipynb",
        "import workbench.notebook as wb\n\nwb.add_stream('booking', 'BookingLogMessage', "
        "topics=[topic], bootstrap_servers=bootstrap)",  # no spec: the preview's own
        "wb.sample('booking', last=100)",
        "%%dagger\nSELECT customer_id, vehicle_type, rand() AS noise FROM `booking`",
        parameters=f"bootstrap = {kafka_broker.bootstrap!r}\ntopic = {topic!r}",
    )
    with pytest.raises(ParityError) as err:
        prepare(notebook, kernel=workbench_kernel, workdir=tmp_path / "work")
    message = str(err.value)
    assert "parity check failed" in message and "promotion refused" in message
    assert "only in the preview" in message and "only in the replay" in message
    assert 0 < len(err.value.only_preview) <= 10 and 0 < len(err.value.only_replay) <= 10
    shown = err.value.only_preview[0]
    assert set(shown) == {"customer_id", "vehicle_type", "noise"}
    assert json.dumps(shown, sort_keys=True) in message
    record = tmp_path / "work" / "record"
    assert recorded_spec(record, None, notebook).name == "noisy"  # the job's default name


def test_a_scratch_cell_that_raises_is_skipped_when_tagged(
    kafka_broker, workbench_kernel, tmp_path
):
    """Issue 36: a scratch cell that raises stopped the promotion with no way to keep it.
    The error names the cell tag ``scratch``; a cell tagged so stays in the record (a raw
    cell) and is not run, so the notebook promotes as it is."""
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    demo_events(kafka_broker.bootstrap, "bookings", topic=topic, events=300, seed=SEED,
                start=START)  # fmt: skip
    scratch = "wb.preview('SELECT nope FROM booking')  # trying things"
    notebook = code_notebook(
        tmp_path / "scratchy.ipynb",
        "import workbench.notebook as wb\n\nwb.add_stream('booking', 'BookingLogMessage', "
        "topics=[topic], bootstrap_servers=bootstrap)",
        "wb.sample('booking', last=100)",
        "%%dagger\nSELECT vehicle_type, count(*) AS n FROM booking GROUP BY vehicle_type",
        scratch,
        parameters=f"bootstrap = {kafka_broker.bootstrap!r}\ntopic = {topic!r}",
    )
    with pytest.raises(PromoteError) as err:
        prepare(notebook, kernel=workbench_kernel, workdir=tmp_path / "untagged")
    message = str(err.value)
    assert f"in the cell `{scratch}` (cell 5): SqlError: Unknown column 'nope'" in message
    assert "give it the cell tag `scratch`" in message and "promote skips it" in message

    nb = nbformat.read(notebook, as_version=4)
    nb.cells[4].metadata["tags"] = ["scratch"]
    nbformat.write(nb, notebook)
    said: list[str] = []
    got = prepare(notebook, kernel=workbench_kernel, workdir=tmp_path / "tagged", emit=said.append)
    assert got.parity["status"] == "passed" and got.parity["rows"] > 0
    assert "1 cell(s) tagged scratch skipped" in said[0]
    executed = nbformat.reads(got.notebook_bytes.decode(), as_version=4)
    kept = executed.cells[4]
    assert (kept.cell_type, kept.source, kept.metadata["tags"]) == ("raw", scratch, ["scratch"])


def test_a_notebook_without_a_preview_is_refused(workbench_kernel, tmp_path):
    notebook = code_notebook(
        tmp_path / "nopreview.ipynb", USE_SURGE, parameters="bootstrap = None\ntopic = 't'"
    )
    with pytest.raises(PromoteError, match="ran no preview.*add a preview cell"):
        prepare(notebook, kernel=workbench_kernel, workdir=tmp_path / "work")


def test_a_stream_started_in_the_notebook_is_refused(workbench_kernel, tmp_path):
    notebook = code_notebook(
        tmp_path / "runs.ipynb",
        USE_SURGE,
        "from workbench.streaming.job import StreamingJob\n\nStreamingJob(spec).start()",
        parameters="bootstrap = '127.0.0.1:1'\ntopic = 't'",
    )
    with pytest.raises(PromoteError) as err:
        prepare(notebook, kernel=workbench_kernel, workdir=tmp_path / "work")
    assert "failed under papermill in the cell `from workbench.streaming.job import" in str(
        err.value
    )
    assert "the stream never runs inside papermill" in str(err.value)


def test_streaming_job_start_refuses_in_promote_mode(monkeypatch, tmp_path):
    from workbench.notebook.examples import bundled
    from workbench.streaming.job import StreamingJob

    monkeypatch.setenv("WORKBENCH_PROMOTE_DIR", str(tmp_path))
    job = StreamingJob(bundled("surge-pricing"), checkpoint=tmp_path / "checkpoint")
    with pytest.raises(StreamInPromoteError, match="promote starts it in the job service"):
        job.start()
    assert not (tmp_path / "checkpoint").exists()


def test_cli_dry_run(kafka_broker, workbench_kernel, tmp_path):
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    args = [f"-p {k} {v}" for k, v in example_params(kafka_broker, topic, events=600).items()]
    result = workbench("promote", ROOT / "notebooks" / "api_health.ipynb", "--dry-run",
                       "--kernel", workbench_kernel, "--workdir", tmp_path,
                       *" ".join(args).split())  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("papermill: executed api_health.ipynb in promote mode (")
    assert re.match(
        r"parity: (\d+) preview rows == \1 replay rows over the sample offsets "
        r"\(replayed by the kernel after the preview: [\d.]+s; compared: [\d.]+s\)$",
        lines[1],
    ), lines[1]
    spec_text = result.stdout.split("--- spec (api-health)\n")[1].split("--- parity\n")[0]
    assert parse(yaml.safe_load(spec_text)).streams[0].topics == [topic]
    parity = json.loads(result.stdout.split("--- parity\n")[1].split("\ndry run:")[0])
    assert parity["status"] == "passed" and parity["rows"] > 0
    assert lines[-1] == f"dry run: nothing submitted; the executed notebook is in {tmp_path}"
    assert (tmp_path / "api_health.ipynb").exists()
    assert (tmp_path / "record" / "replay.jsonl").exists()  # the kernel replayed: no JVM here


def test_cli_submits_only_after_papermill_and_parity(kafka_broker, workbench_kernel, tmp_path):
    """No job service listens at --server: the steps before submission print, then one
    error line."""
    topic = f"promote-{uuid.uuid4().hex[:8]}"
    args = [f"-p {k} {v}" for k, v in example_params(kafka_broker, topic, events=300).items()]
    result = workbench("promote", ROOT / "notebooks" / "driver_supply.ipynb", "--team", "supply",
                       "--server", "http://127.0.0.1:9", "--kernel", workbench_kernel,
                       "--workdir", tmp_path, *" ".join(args).split())  # fmt: skip
    assert result.returncode == 1
    steps = [line.split(":")[0] for line in result.stdout.splitlines()]
    assert steps == ["papermill", "parity"], result.stdout
    assert result.stderr.startswith("error: "), result.stderr


def test_cli_refuses_unknown_parameters_and_a_missing_team():
    notebook = ROOT / "notebooks" / "surge_pricing.ipynb"
    result = workbench("promote", notebook, "--dry-run", "-p", "topics", "x")
    assert result.returncode == 1
    assert "Unknown parameter 'topics' of surge_pricing.ipynb. Did you mean topic?" in (
        result.stderr
    )
    result = workbench("promote", notebook)
    assert result.returncode == 1 and "--team TEAM" in result.stderr


def test_the_submitted_spec_names_the_owning_team():
    from workbench.notebook.examples import bundled
    from workbench.promote import owned_by

    spec = bundled("surge-pricing")
    assert spec.team == "pricing"
    owned = parse(yaml.safe_load(owned_by(spec, "supply").to_yaml()))  # as the service reads it
    assert owned.team == "supply" and owned.sql == spec.sql


def test_a_renamed_spec_keeps_its_sinks_settings(tmp_path):
    """``--name`` renames the recorded spec; each sink keeps its own keys (an InfluxDB
    sink's measurement and database), not only those every sink has."""
    from workbench.notebook.examples import bundled
    from workbench.promote import SPEC_FILE, recorded_spec

    sink = {"type": "influx", "api": 1, "url": "http://127.0.0.1:1", "database": "d",
            "measurement": "surge"}  # fmt: skip
    (tmp_path / SPEC_FILE).write_text(bundled("surge-pricing", sinks=[sink]).to_yaml())
    renamed = recorded_spec(tmp_path, "surge-prod")
    assert renamed.name == "surge-prod"
    assert renamed.sinks[0].model_dump(include=set(sink)) == sink


def test_a_notebook_without_a_spec_names_the_job_after_its_file(tmp_path):
    """The spec of a notebook that only previewed SQL is named "preview": the job takes the
    notebook's file name instead, checked as any dagger name is."""
    from workbench.notebook.examples import bundled
    from workbench.promote import PREVIEW_SPEC_NAME, SPEC_FILE

    preview = bundled("surge-pricing").model_copy(update={"name": PREVIEW_SPEC_NAME})
    (tmp_path / SPEC_FILE).write_text(preview.to_yaml())
    assert recorded_spec(tmp_path, None, Path("hot spots.ipynb")).name == "hot-spots"
    assert recorded_spec(tmp_path, "surge-prod", Path("hot spots.ipynb")).name == "surge-prod"
    assert recorded_spec(tmp_path, None).name == PREVIEW_SPEC_NAME
    with pytest.raises(SpecError, match="a dagger name is letters"):
        recorded_spec(tmp_path, None, Path("2026 plan.ipynb"))
