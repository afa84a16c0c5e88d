"""The job service runs ``workbench validate``'s checks before it stores or starts a spec
(issue 36, item 8): a misspelt column is refused at submit with validate's own message,
and nothing is stored, instead of a job restarted with backoff until FAILED."""

from __future__ import annotations

import sys

import pytest
from jobkit import spec_yaml, teams_file
from polling import wait_for

from workbench.exceptions import SpecRefusedError
from workbench.jobs import spec_check
from workbench.settings import child_env

pytestmark = pytest.mark.integration

CHECK = [sys.executable, "-m", "workbench.jobs.spec_check"]
MISSPELT = "SELECT order_numbr FROM booking"


def test_a_misspelt_column_is_refused_at_submit_edit_and_start(make_service, tmp_path):
    service = make_service(teams=teams_file(tmp_path), validate_command=CHECK)
    bob = service.principal("bob")
    with pytest.raises(SpecRefusedError) as err:
        service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml(sql=MISSPELT))
    message = str(err.value)
    assert message.startswith("Unknown column 'order_numbr'. Did you mean order_number")
    assert "SELECT order_numbr FROM booking\n" in message and "^^^^^^^^^^^" in message
    assert "Nothing was stored or started for job 'surge'" in message
    assert (err.value.kind, err.value.status) == ("SqlError", 400)
    assert service.list_jobs(bob) == []

    service.submit(bob, name="surge", team="pricing", spec_yaml=spec_yaml())  # checked: fine
    with pytest.raises(SpecRefusedError, match="order_numbr"):
        service.edit(bob, "surge", spec_yaml(sql=MISSPELT))
    assert [v["number"] for v in service.versions(bob, "surge")] == [1]


def test_a_sink_that_cannot_take_the_columns_is_refused(tmp_path):
    spec = spec_yaml(
        sinks=[{"type": "parquet", "path": str(tmp_path), "time_column": "event_timestmp"}]
    )
    with pytest.raises(
        SpecRefusedError, match="the query has no column .event_timestmp. \\(time_column\\)"
    ) as err:
        spec_check.check(CHECK, spec, child_env(), "surge")
    assert err.value.kind == "SpecError"


def test_a_run_failing_on_the_specs_sql_is_failed_at_once(make_service, monkeypatch):
    """A version that got past the checks (stored before them, or checked with Spark off)
    and fails on its SQL: FAILED after one run, the error named, no backoff."""
    monkeypatch.setenv("WB_TEST_JAAS", "unused: no broker is asked")
    runner = [sys.executable, "-m", "workbench.jobs.runner"]
    policy = {"max_failures": 5, "backoff_s": 0.5}
    service = make_service(runner_command=runner, tick_s=0.2, policy=policy)
    assert service.start_supervisor()
    who = service.principal(None)
    service.submit(who, name="surge", team="pricing", spec_yaml=spec_yaml(sql=MISSPELT))
    job = wait_for(
        lambda: (j := service.get_job(who, "surge"))["status"] == "FAILED" and j,
        240,
        "the job to fail",
    )
    assert job["failures"] == 1 and "Unknown column 'order_numbr'" in job["last_error"]
    actions = [e["action"] for e in service.events(who, "surge", last=100)]
    assert actions.count("spawn") == 1 and "backoff" not in actions
    assert actions[-2:] == ["run-failed", "failed"]


def test_one_warm_check_process_serves_every_check_and_a_dead_one_is_replaced():
    """Only the first check pays for a JVM: later ones, refused or not, go to the same
    process; one that died (killed, or ended idle) is replaced at the next check."""
    checker = spec_check.Checker(CHECK, child_env())
    try:
        checker.check(spec_yaml(), "surge")
        first = checker._proc.pid
        with pytest.raises(SpecRefusedError, match="order_numbr"):
            checker.check(spec_yaml(sql=MISSPELT), "surge")
        checker.check(spec_yaml(), "surge")
        assert checker._proc.pid == first
        checker._proc.kill()
        checker._proc.wait()
        with pytest.raises(SpecRefusedError, match="order_numbr"):
            checker.check(spec_yaml(sql=MISSPELT), "surge")
        assert checker._proc.pid != first
    finally:
        checker.close()
    assert checker._proc is None
