"""Schema pins in the job service (:mod:`workbench.jobs.schema_pins`), on its database
(SQLite and PostgreSQL): a version pins the latest published schema version at submit;
edits keep the pin unless they ask for another; a pin that breaks a message the job reads
is refused with the list (file and line), one that breaks only other messages is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jobkit import spec_yaml, teams_file
from polling import wait_for

from workbench.exceptions import SchemaBreakingError, SchemaMismatchError, SchemaVersionError
from workbench.schemas import sets
from workbench.schemas.versions import SchemaVersions

pytestmark = pytest.mark.unit

COMPAT = Path(__file__).resolve().parents[1] / "fixtures" / "schemas" / "compat"
CLOCK = "  int64 event_timestamp = 15;\n"


def order_spec(message: str = "compat.Order", sql: str = "SELECT * FROM booking") -> str:
    spec = spec_yaml(sql=sql)
    return spec.replace("esb.booking.BookingLogMessage", message)


@pytest.fixture
def service(make_service, tmp_path):
    made = make_service(teams=teams_file(tmp_path))
    made.schemas = SchemaVersions(tmp_path / "schema-versions")
    made.schemas.folder.mkdir()
    return made


def publish(service, case: str, side: str) -> int:
    """Publish a fixture set whose Order has an event time (a job's stream needs one:
    its lines are one below the fixture's)."""
    folder = service.schemas.folder.parent / f"{case}-{side}"
    shutil.copytree(COMPAT / case / side, folder)
    proto = folder / "shop.proto"
    text = proto.read_text().replace("message Order {\n", "message Order {\n" + CLOCK, 1)
    proto.write_text(text)
    return service.schemas.publish(sets.compiled(folder), str(folder))[0].number


def pins(service, who) -> list:
    return [v["schema_version"] for v in service.versions(who, "surge")]


def test_submit_pins_the_latest_and_edits_keep_it(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())
    assert pins(service, bob) == [None]  # nothing published: the bundled schemas
    v1 = publish(service, "field_type_changed", "old")
    service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())
    publish(service, "compatible", "new")
    service.edit(bob, "surge", order_spec(), note="same pin")
    assert pins(service, bob) == [None, v1, v1]
    assert service.get_job(bob, "surge")["schema_version"] == v1
    assert [j["schema_version"] for j in service.list_jobs(bob)] == [v1]


def test_an_edit_onto_a_breaking_version_is_refused_with_the_list(service):
    bob = service.principal("bob")
    v1 = publish(service, "field_type_changed", "old")
    service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())
    v2 = publish(service, "field_type_changed", "new")
    with pytest.raises(SchemaBreakingError) as refused:
        service.edit(bob, "surge", order_spec(), schema_version=v2)
    [change] = refused.value.changes
    assert (change.kind, change.line) == ("field-type-changed", 7)
    assert "shop.proto:7: field-type-changed" in str(refused.value)
    with pytest.raises(SchemaBreakingError):  # a new submit (a promotion) too
        service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())
    assert pins(service, bob) == [v1]


def test_a_compatible_version_is_taken_on_request(service):
    bob = service.principal("bob")
    publish(service, "compatible", "old")
    service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())
    v2 = publish(service, "compatible", "new")
    service.edit(bob, "surge", order_spec(), schema_version=v2)
    assert pins(service, bob) == [1, v2]
    service.rollback(bob, "surge", 1)
    assert pins(service, bob) == [1, v2, 1]  # a rollback takes the version's pin back


def test_a_version_is_checked_against_its_own_schema_version(service):
    bob = service.principal("bob")
    publish(service, "compatible", "old")
    sql = "SELECT id, amount FROM booking"
    service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec(sql=sql))
    v2 = publish(service, "compatible", "new")  # amount renamed amount_cents: compatible
    with pytest.raises(SchemaMismatchError, match="schema version 2") as refused:
        service.edit(bob, "surge", order_spec(sql=sql), schema_version=v2)
    assert "amount_cents" in str(refused.value)  # did you mean
    with pytest.raises(SchemaMismatchError):  # a submit pins the latest: v2
        service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec(sql=sql))
    service.edit(bob, "surge", order_spec(sql=sql), note="stays on 1")
    renamed = order_spec(sql="SELECT id, amount_cents FROM booking")
    service.edit(bob, "surge", renamed, schema_version=v2)
    assert pins(service, bob) == [1, 1, v2]


def test_an_unpinned_version_is_checked_against_the_bundled_schemas(service):
    bob = service.principal("bob")
    with pytest.raises(SchemaMismatchError, match="schema version bundled"):
        service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())


def test_breaking_changes_to_messages_the_job_does_not_read_pass(service):
    bob = service.principal("bob")
    publish(service, "message_removed", "old")  # has compat.Order and compat.Refund
    service.submit(bob, name="surge", team="pricing", spec_yaml=order_spec())
    v2 = publish(service, "message_removed", "new")  # Refund removed
    service.edit(bob, "surge", order_spec(), schema_version=v2)
    assert pins(service, bob) == [1, v2]


def test_an_unknown_schema_version_is_refused(service):
    bob = service.principal("bob")
    with pytest.raises(SchemaVersionError, match="no schema version 4"):
        service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(), schema_version=4)


def test_a_lost_pinned_set_fails_the_job_saying_what_to_do(make_service, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))  # the supervisor's store
    policy = {"max_failures": 1, "backoff_s": 0.2, "backoff_max_s": 1.0}
    service = make_service(tick_s=0.1, heartbeat_s=0.2, policy=policy)
    service.schemas = SchemaVersions()
    v1 = publish(service, "compatible", "old")
    root = service.principal("root")
    service.submit(root, name="surge", team="pricing", spec_yaml=order_spec())
    (service.schemas.folder / f"v{v1}.desc").unlink()
    assert service.start_supervisor()
    job = wait_for(
        lambda: (j := service.get_job(root, "surge"))["status"] == "FAILED" and j, 30, "FAILED"
    )
    assert "--schema-version" in job["last_error"]
