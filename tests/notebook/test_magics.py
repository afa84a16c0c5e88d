"""The notebook API and magics in a real IPython shell, over samples from the real broker."""

from __future__ import annotations

import pytest
from geo_reference import surge_windows
from streaming import SURGE_SQL, new_topic, publish_events, surge_rows, surge_spec

import workbench.notebook as wb
from workbench.exceptions import SqlError, UnknownNameError

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    assert ip.run_cell("%load_ext workbench.notebook").success
    yield ip
    ip.run_cell("%unload_ext workbench.notebook")
    wb.reset()


@pytest.fixture(scope="module")
def bookings(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = new_topic(bootstrap, "magics", partitions=2)
    sent = publish_events(bootstrap, topic, 1200, seed=31, malformed=0.01)
    return topic, sent


def test_dagger_cell_previews_the_current_sample(spark, kafka_broker, shell, bookings):
    topic, sent = bookings
    wb.add_stream(
        "booking", "BookingLogMessage", topics=[topic], bootstrap_servers=kafka_broker.bootstrap
    )
    taken = shell.run_cell("import workbench.notebook as wb\nwb.sample('booking', last=100_000)")
    assert taken.success and len(wb.samples["booking"]) == 1200

    ran = shell.run_cell(f"%%dagger --watermark 10s --emit final --name surge\n{SURGE_SQL}")
    assert ran.success, ran.error_in_exec
    preview = ran.result
    assert shell.user_ns["surge"] is preview is wb.last_preview()
    assert surge_rows(preview.rows.to_dict("records")) == surge_windows(sent.events)
    assert preview.counts["undecodable"] == sent.malformed > 0
    assert preview.counts["records"] == 1200
    assert preview.spec is not None and preview.spec.emit == "final"

    only = shell.run_cell("%%dagger --streams booking\nSELECT count(1) AS n FROM booking")
    assert only.success and int(only.result.rows["n"][0]) == len(sent.events)


def test_streams_and_schema(shell):
    listed = shell.run_cell("%dagger_streams")
    assert listed.success
    rows = listed.result.set_index("table")
    assert rows.loc["booking", "message"].endswith("BookingLogMessage")
    assert rows.loc["booking", "sample"].startswith("sample of 'booking'")
    shown = shell.run_cell("%dagger_schema BookingLogMessage")
    assert shown.success
    text = repr(shown.result)
    assert text.startswith("esb.booking.BookingLogMessage") and "event_timestamp:" in text
    assert "<code>pickup_lat</code>" in shown.result._repr_html_()
    # an enum field shows the value names SQL compares it with (issue 36)
    assert "service_type: esb.booking.ServiceType (enum: SERVICE_TYPE_UNKNOWN, GO_RIDE," in text
    assert "<code>GO_RIDE</code>" in shown.result._repr_html_()


def test_unknown_names_list_the_known_ones(shell, capsys):
    ran = shell.run_cell("%dagger_schema BookingLogMesage")
    assert isinstance(ran.error_in_exec, UnknownNameError)
    out = capsys.readouterr().out
    assert "Did you mean esb.booking.BookingLogMessage" in out or "BookingLogMessage" in out
    assert "Traceback" not in out

    ran = shell.run_cell("wb.sample('bookings')")
    assert isinstance(ran.error_in_exec, UnknownNameError)
    assert "Did you mean booking?" in capsys.readouterr().out

    ran = shell.run_cell("%%dagger --streams payments\nSELECT 1 FROM payments")
    assert isinstance(ran.error_in_exec, UnknownNameError)
    assert "Unknown sample 'payments'" in capsys.readouterr().out


def test_bad_sql_shows_line_and_column(spark, shell, capsys):
    ran = shell.run_cell("%%dagger\nSELECT pickup_lat,\n  no_such_field\nFROM booking")
    assert isinstance(ran.error_in_exec, SqlError)
    out = capsys.readouterr().out
    assert "SqlError:" in out and "Line 2, Col: 3." in out and "^" in out
    assert "Traceback" not in out


def test_alerts_after_a_dagger_cell_test_fire_the_specs_rules(
    spark, kafka_broker, shell, bookings, tmp_path
):
    """Issue 36: with a spec in use, ``wb.last_preview().alerts()`` after a ``%%dagger`` cell
    said "no alert rules" though the spec has them: the cell previews the spec, with its SQL."""
    topic, sent = bookings
    rule = {"name": "busy-cell", "when": "bookings >= 2", "group_by": ["tag_s2id"]}
    spec = surge_spec(kafka_broker.bootstrap, topic, tmp_path, sinks=[], alerts=[rule])
    wb.use(spec)
    try:
        ran = shell.run_cell(f"%%dagger\n{SURGE_SQL}")
        assert ran.success, ran.error_in_exec
        tested = shell.run_cell("wb.last_preview().alerts()")
        assert tested.success, tested.error_in_exec
        assert [r.name for r in tested.result.rules] == ["busy-cell"]
        assert tested.result.points > 0
        assert "(no metric rules)" not in repr(tested.result)
    finally:
        wb.reset()  # no spec in use for later tests
