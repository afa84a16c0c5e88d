"""Promote mode in the notebook API: with ``$WORKBENCH_PROMOTE_DIR`` set, ``wb.use``,
``wb.connect`` and ``wb.preview`` record the spec, the samples and the preview's rows;
without it nothing is written. Over samples from the real broker."""

from __future__ import annotations

import json

import pytest
from streaming import SURGE_SQL, new_topic, publish_events, surge_spec

import workbench.notebook as wb
from workbench.exceptions import PromoteError
from workbench.lab.parity import compare, read_jsonl
from workbench.lab.sampling import Sample
from workbench.paths import PROMOTE_DIR_ENV as ENV
from workbench.spec import load

pytestmark = pytest.mark.unit

BY_VEHICLE = """
SELECT vehicle_type AS tag_vehicle_type, count(1) AS bookings,
       TUMBLE_END(rowtime, INTERVAL '60' SECOND) AS window_timestamp
FROM `booking`
GROUP BY vehicle_type, TUMBLE(rowtime, INTERVAL '60' SECOND)
"""


@pytest.fixture(scope="module")
def topic(kafka_broker):
    name = new_topic(kafka_broker.bootstrap, "promoting", partitions=2)
    publish_events(kafka_broker.bootstrap, name, 400, seed=17)
    return name


@pytest.fixture(autouse=True)
def _fresh_state():
    wb.reset()
    yield
    wb.reset()


def test_promote_mode_records_spec_samples_and_preview(
    spark, kafka_broker, topic, tmp_path, monkeypatch
):
    record = tmp_path / "record"
    spec = surge_spec("127.0.0.1:1", topic, tmp_path, sinks=[{"type": "log"}])
    wb.use(spec)
    assert not record.exists()  # not in promote mode: nothing written

    monkeypatch.setenv(ENV, str(record))
    wb.use(spec)
    assert load(record / "spec.yaml").streams[0].bootstrap_servers == "127.0.0.1:1"
    wb.connect(kafka_broker.bootstrap)
    assert load(record / "spec.yaml").streams[0].bootstrap_servers == kafka_broker.bootstrap
    assert not (record / "preview.json").exists()

    wb.sample("booking", last=60, progress=False)
    shown = wb.preview(BY_VEHICLE, watermark="30s")
    promoted = load(record / "spec.yaml")
    assert promoted.sql == BY_VEHICLE  # the preview's SQL replaces the spec's
    assert promoted.watermark_delay_ms == 30_000 and promoted.emit == spec.emit
    assert promoted.name == spec.name and [s.type for s in promoted.sinks] == ["log"]
    saved = Sample.load(record / "samples" / "booking.json", read=False)
    assert saved.offsets == shown.samples["booking"].offsets
    assert saved.bootstrap == kafka_broker.bootstrap
    rows = read_jsonl((record / "preview.jsonl").read_text())
    assert len(rows) == len(shown.rows) > 0
    options = json.loads((record / "preview.json").read_text())
    assert options["sql"] == BY_VEHICLE and options["tables"] == ["booking"]
    assert options["given"] == {"watermark_delay": "30s", "emit": None}
    assert options["columns"] == ["tag_vehicle_type", "bookings", "window_timestamp"]
    replay = json.loads((record / "replay.json").read_text())  # the production plan, now
    assert replay["rows"] == len(rows) and replay["spec_yaml"] == promoted.to_yaml()
    assert not compare(rows, read_jsonl((record / "replay.jsonl").read_text()))

    wb.preview()  # the spec's own SQL, the spec's options
    assert load(record / "spec.yaml").sql == SURGE_SQL
    assert load(record / "spec.yaml").watermark_delay_ms == spec.watermark_delay_ms


def test_preview_rows_are_recorded_as_the_notebook_saw_them(
    spark, kafka_broker, topic, tmp_path, monkeypatch
):
    """Without a spec in use, the preview's own spec (over the samples' streams) is kept."""
    monkeypatch.setenv(ENV, str(tmp_path))
    wb.add_stream("booking", "BookingLogMessage", topics=[topic],
                  bootstrap_servers=kafka_broker.bootstrap)  # fmt: skip
    wb.sample("booking", last=100, progress=False)
    shown = wb.preview(SURGE_SQL)
    assert load(tmp_path / "spec.yaml").streams[0].topics == [topic]
    recorded = read_jsonl((tmp_path / "preview.jsonl").read_text())
    seen = json.loads(shown.rows.to_json(orient="records", date_format="iso", date_unit="us"))
    assert not compare(recorded, seen)


def test_wb_promote_needs_a_saved_notebook_and_a_team(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with pytest.raises(PromoteError, match="give the notebook file to promote"):
        wb.promote(team="pricing")
    with pytest.raises(PromoteError, match="no such notebook file"):
        wb.promote(tmp_path / "missing.ipynb", team="pricing")
    notebook = tmp_path / "saved.ipynb"
    notebook.write_text("{}")
    with pytest.raises(PromoteError, match="give the team"):
        wb.promote(notebook)
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))  # the kernel's notebook, by Jupyter
    with pytest.raises(PromoteError, match=f"give the team.*wb.promote\\('{notebook}'"):
        wb.promote()
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(PromoteError, match="remove it from the notebook"):
        wb.promote(notebook, team="pricing")
