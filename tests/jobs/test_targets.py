"""One writer per sink target, and an edit keeps the job's name (issue 36, item 9): a spec
named as another job, or writing the Parquet/Delta folder, InfluxDB measurement or Kafka
topic another job writes, is refused before anything is stored; the owner is named only to
a user who may see it."""

from __future__ import annotations

import pytest
from jobkit import spec_yaml, teams_file

from workbench.exceptions import JobConflictError

pytestmark = pytest.mark.unit


@pytest.fixture
def service(make_service, tmp_path):
    return make_service(teams=teams_file(tmp_path))


def parquet(path) -> list[dict]:
    return [{"type": "parquet", "path": str(path)}]


def influx(measurement: str, database: str = "city") -> list[dict]:
    return [{"type": "influx", "api": 1, "database": database, "measurement": measurement}]


def kafka(topic: str) -> list[dict]:
    return [{"type": "kafka", "topic": topic, "bootstrap_servers": "127.0.0.1:1"}]


def test_edit_with_another_jobs_spec_is_refused_and_nothing_is_stored(service, tmp_path):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml("surge"))
    other = spec_yaml("eta", sinks=parquet(tmp_path / "eta"))
    with pytest.raises(JobConflictError, match="named 'eta', not 'surge'") as err:
        service.edit(bob, "surge", other)
    assert err.value.status == 409
    assert [v["number"] for v in service.versions(bob, "surge")] == [1]
    assert [e["action"] for e in service.events(bob, "surge")] == ["submit"]
    # its own spec, edited, is a new version
    assert service.edit(bob, "surge", spec_yaml("surge", trigger_interval="5s"))["version"] == 2


def test_a_job_submitted_under_another_name_keeps_its_specs_name(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge-b", team="pricing", spec_yaml=spec_yaml("surge"))
    assert service.edit(bob, "surge-b", spec_yaml("surge", trigger_interval="5s"))["version"] == 2


def test_a_second_job_on_one_parquet_folder_is_refused_naming_the_first(service, tmp_path):
    bob, carol = service.principal("bob"), service.principal("carol")
    folder = tmp_path / "out" / "surge"
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(sinks=parquet(folder)))
    again = spec_yaml("eta", sinks=[{"type": "delta", "path": f"{tmp_path}/out/../out/surge"}])
    with pytest.raises(JobConflictError) as err:
        service.submit(carol, name="eta", team="pricing", spec_yaml=again)
    assert str(err.value) == (
        f"The folder {folder} is written by job 'surge' (team pricing). Write your sink "
        "somewhere else, or stop 'surge' first."
    )
    assert [j["name"] for j in service.list_jobs(carol)] == ["surge"]
    # an edit moving an existing job onto the folder is refused the same way
    service.submit(carol, name="eta", team="pricing", spec_yaml=spec_yaml("eta"))
    with pytest.raises(JobConflictError, match="written by job 'surge'"):
        service.edit(carol, "eta", again)
    assert service.get_job(carol, "eta")["version"] == 1


def test_another_teams_owner_is_not_named(service, tmp_path):
    bob, dave = service.principal("bob"), service.principal("dave")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(sinks=influx("surge")))
    with pytest.raises(JobConflictError) as err:
        service.submit(
            dave, name="supply", team="supply", spec_yaml=spec_yaml("supply", sinks=influx("surge"))
        )
    message = str(err.value)
    assert message == (
        "The InfluxDB measurement 'surge' of 'city' at http://127.0.0.1:8086 is taken: another "
        "job writes it. Write your sink somewhere else."
    )
    assert "pricing" not in message and "'surge' (team" not in message
    # another measurement, or the same one in another database, is free
    service.submit(
        dave, name="supply", team="supply", spec_yaml=spec_yaml("supply", sinks=influx("supply"))
    )
    service.submit(
        dave, name="other", team="supply", spec_yaml=spec_yaml("other", sinks=influx("surge", "x"))
    )


def test_kafka_topics_and_stopped_jobs(service):
    bob = service.principal("bob")
    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(sinks=kafka("surges")))
    with pytest.raises(JobConflictError, match="Kafka topic 'surges' .* job 'surge'"):
        service.submit(
            bob, name="eta", team="pricing", spec_yaml=spec_yaml("eta", sinks=kafka("surges"))
        )
    service.stop(bob, "surge")  # a stopped job writes nothing: its topic is free ...
    service.submit(
        bob, name="eta", team="pricing", spec_yaml=spec_yaml("eta", sinks=kafka("surges"))
    )
    with pytest.raises(JobConflictError, match="written by job 'eta'"):
        service.start(bob, "surge")  # ... until it is started again while another writes it
    assert service.get_job(bob, "surge")["desired"] == "stopped"
