"""The Voila view of data quality: rows from a checkpoint or a Parquet sink, and the
notebook run top to bottom through papermill on the workbench kernel."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from workbench.quality import history
from workbench.quality.view import quality_html, rows_from

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quality.ipynb"
T0 = 1_790_000_400_000


def rows(topic, score=90.0):
    return [
        {"window_timestamp": datetime.fromtimestamp((T0 + n * 600_000) / 1000, UTC),
         "tag_topic": topic, "total": 10 + n, "score": score + n, "emitted_batch": n}
        for n in range(3)
    ]  # fmt: skip


def test_rows_from_a_checkpoint_and_from_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    history.append(tmp_path / "checkpoint", rows("a") + rows("b", 50.0))
    assert len(rows_from(tmp_path / "checkpoint")) == 6
    sink = tmp_path / "sink" / "dt=2026-09-21"
    sink.mkdir(parents=True)
    table = pa.Table.from_pylist(rows("a") + [{**rows("a")[0], "total": 99, "emitted_batch": 5}])
    pq.write_table(table, sink / "part-0.parquet")
    found = rows_from(tmp_path / "sink")
    assert [r["total"] for r in found] == [99, 11, 12]
    page = quality_html(tmp_path / "checkpoint", topic="b")
    assert "Data quality: b" in page and "Data quality: a" not in page and "<svg" in page
    assert "No quality windows" in quality_html(tmp_path / "nothing")


def test_the_notebook_shows_each_topic(workbench_kernel, tmp_path):
    import nbformat
    import papermill

    history.append(tmp_path / "checkpoint", rows("bookings"))
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK), str(out), parameters={"source": str(tmp_path / "checkpoint")},
        kernel_name=workbench_kernel, cwd=str(tmp_path), progress_bar=False,
        execution_timeout=300,
    )  # fmt: skip
    nb = nbformat.read(str(out), as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    values = [m["state"].get("value") for m in state.values() if m["model_name"] == "HTMLModel"]
    assert any(v and "Data quality: bookings" in v for v in values)
