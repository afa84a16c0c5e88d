"""The supervisor with real processes: a stand-in job program (fixtures/fake_runner.py)
that follows the run folder contract is spawned, watched, restarted, stopped and killed."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from jobkit import kill_runs, spec_yaml
from polling import wait_for
from sqlalchemy import select

import workbench
from workbench.jobs import procs
from workbench.jobs.db import Job, Run
from workbench.service.supervisor import exit_text

pytestmark = pytest.mark.unit

FAST = {
    "max_failures": 3,
    "backoff_s": 0.2,
    "backoff_max_s": 1.0,
    "healthy_after_s": 60,
    "stop_grace_s": 5,
    "kill_grace_s": 5,
    "heartbeat_timeout_s": 10,
    "lagging_offsets": 100,
}


@pytest.fixture
def supervised(make_service):
    """``supervised(**policy)``: a single-user service whose supervisor ticks every 0.1 s."""

    def make(**policy):
        service = make_service(tick_s=0.1, heartbeat_s=0.2, policy={**FAST, **policy})
        assert service.start_supervisor()
        return service

    return make


def submit(service, name="surge", description=""):
    who = service.principal("bob")
    text = spec_yaml(name=name, description=description)
    return service.submit(who, name=name, team="pricing", spec_yaml=text)


def status_is(service, name, *statuses, timeout=30.0):
    who = service.principal("bob")

    def check():
        job = service.get_job(who, name)
        return job if job["status"] in statuses else None

    return wait_for(check, timeout, f"{name} to be {statuses}")


def runs(service, name="surge") -> list[Run]:
    with service.db.session() as s:
        query = select(Run).join(Job, Job.id == Run.job_id).where(Job.name == name)
        return list(s.scalars(query.order_by(Run.id)))


def actions(service, name="surge") -> list[str]:
    return [e["action"] for e in service.events(service.principal("bob"), name, last=1000)]


def test_a_job_runs_in_its_own_process_group_and_stops_gracefully(supervised):
    service = supervised()
    submit(service)
    job = status_is(service, "surge", "RUNNING")
    pid = job["run"]["pid"]
    assert os.getpgid(pid) == pid and os.getsid(pid) == pid  # its own session
    assert procs.alive(pid, runs(service)[0].run_dir)
    wait_for(lambda: service.get_job(service.principal("bob"), "surge")["metrics"]["batches"])
    run_dir = Path(runs(service)[0].run_dir)
    run_json = json.loads((run_dir / "run.json").read_text())
    assert run_json["checkpoint"] == job["checkpoint"] and run_json["handoff"] is None
    assert run_json["spark_master"] == "local[2]" and run_json["version"] == 1
    assert "${env:WB_TEST_JAAS}" in (run_dir / "spec.yaml").read_text()
    log = service.logs(service.principal("bob"), "surge")
    assert f"pid {pid} attempt 1" in log["text"] and log["running"] and log["run"] == "1-1"
    assert service.logs(service.principal("bob"), "surge", offset=log["next_offset"])["text"] in (
        "", service.logs(service.principal("bob"), "surge", offset=log["next_offset"])["text"]
    )  # fmt: skip
    assert service.progress(service.principal("bob"), "surge", last=2)[-1]["batch_id"] >= 1

    service.stop(service.principal("bob"), "surge")
    job = status_is(service, "surge", "STOPPED")
    [run] = runs(service)
    assert (run.exit_code, run.end_reason) == (0, "stopped") and run.ended_at is not None
    assert not procs.alive(pid, run.run_dir) and job["run"] is None
    assert actions(service) == [
        "submit", "spawn", "running", "stop", "stop-requested", "run-stopped"
    ]  # fmt: skip


def test_a_crashing_job_backs_off_and_fails_after_max_failures(supervised):
    service = supervised(max_failures=3)
    submit(service, description="crash")
    job = status_is(service, "surge", "FAILED")
    assert job["failures"] == 3 and "planted failure" in job["last_error"]
    assert [r.exit_code for r in runs(service)] == [1, 1, 1]
    events = service.events(service.principal("bob"), "surge")
    assert [e["detail"]["seconds"] for e in events if e["action"] == "backoff"] == [0.2, 0.4]
    failed = [e for e in events if e["action"] == "failed"]
    assert failed[0]["detail"]["error"] == "planted failure: the SQL cannot start"
    status_is(service, "surge", "FAILED", timeout=1)  # no further attempt
    assert len(runs(service)) == 3
    service.start(service.principal("bob"), "surge")  # a new round of attempts
    wait_for(lambda: len(runs(service)) == 4, what="a fourth run")


def test_a_run_failing_on_an_error_no_retry_mends_fails_the_job_at_once(supervised):
    service = supervised(max_failures=5)
    submit(service, description="invalid")
    job = status_is(service, "surge", "FAILED")
    assert job["failures"] == 1 and "Unknown column 'order_numbr'" in job["last_error"]
    assert [r.exit_code for r in runs(service)] == [4]
    assert "backoff" not in actions(service)
    status_is(service, "surge", "FAILED", timeout=1)  # no further attempt
    assert len(runs(service)) == 1


def test_a_run_that_vanishes_is_a_failure_with_its_log(supervised):
    service = supervised(max_failures=1)
    submit(service, description="vanish")
    job = status_is(service, "surge", "FAILED")
    assert "exited with code 1" in job["last_error"] and "vanishing" in job["last_error"]
    assert runs(service)[0].end_reason == "killed"


def test_a_run_killed_by_a_signal_fails_with_the_signal_named_and_its_log(supervised):
    service = supervised(max_failures=1)
    submit(service, description="die")
    job = status_is(service, "surge", "FAILED")
    assert job["last_error"].startswith("the run was killed by SIGKILL (code -9)")
    assert "dying by SIGKILL" in job["last_error"]
    assert runs(service)[0].exit_code == -signal.SIGKILL


def test_exit_text_names_the_signal_of_a_negative_code():
    assert exit_text(1) == "the run exited with code 1"
    assert exit_text(-signal.SIGKILL) == "the run was killed by SIGKILL (code -9)"
    assert exit_text(-signal.SIGTERM) == "the run was killed by SIGTERM (code -15)"
    assert exit_text(-200) == "the run was killed by signal 200 (code -200)"


def test_failures_reset_after_a_healthy_period(supervised):
    service = supervised(max_failures=3, healthy_after_s=1.5)
    submit(service, description="crash-first:2")
    wait_for(lambda: len(runs(service)) == 3, what="a third run")
    status_is(service, "surge", "RUNNING")
    assert service.get_job(service.principal("bob"), "surge")["failures"] == 2
    wait_for(lambda: service.get_job(service.principal("bob"), "surge")["failures"] == 0)
    assert "healthy" in actions(service) and len(runs(service)) == 3


def test_a_job_ignoring_stop_gets_sigterm_then_sigkill(supervised):
    service = supervised(stop_grace_s=0.5, kill_grace_s=0.5)
    submit(service, description="ignore-stop")
    pid = status_is(service, "surge", "RUNNING")["run"]["pid"]
    service.stop(service.principal("bob"), "surge")
    status_is(service, "surge", "STOPPED")
    assert actions(service)[-4:] == ["stop-requested", "sigterm", "sigkill", "run-stopped"]
    [run] = runs(service)
    assert run.end_reason == "killed" and run.exit_code == -signal.SIGKILL
    assert not procs.alive(pid, run.run_dir)


def test_sigterm_alone_stops_a_job_gracefully(supervised):
    service = supervised(stop_grace_s=0.3, kill_grace_s=5)
    submit(service, description="deaf")
    status_is(service, "surge", "RUNNING")
    service.stop(service.principal("bob"), "surge")
    status_is(service, "surge", "STOPPED")
    assert "sigkill" not in actions(service) and "sigterm" in actions(service)
    assert runs(service)[0].end_reason == "stopped"


def test_restart_and_a_new_version_replace_the_run(supervised):
    service = supervised()
    submit(service)
    first = status_is(service, "surge", "RUNNING")["run"]["pid"]
    service.restart(service.principal("bob"), "surge")
    wait_for(lambda: len(runs(service)) == 2, what="a second run")
    second = status_is(service, "surge", "RUNNING")["run"]["pid"]
    assert first != second and runs(service)[0].end_reason == "stopped"
    service.edit(service.principal("bob"), "surge", spec_yaml(trigger_interval="5s"))
    wait_for(lambda: len(runs(service)) == 3, what="a run of version 2")
    assert status_is(service, "surge", "RUNNING")["version"] == 2
    assert [r.version for r in runs(service)] == [1, 1, 2]
    assert [r.end_reason for r in runs(service)][:2] == ["stopped", "stopped"]
    assert service.get_job(service.principal("bob"), "surge")["failures"] == 0


def test_two_jobs_run_side_by_side(supervised):
    service = supervised(max_failures=1)
    submit(service, "one")
    submit(service, "two", description="crash")
    status_is(service, "one", "RUNNING")
    status_is(service, "two", "FAILED")
    assert status_is(service, "one", "RUNNING")["failures"] == 0
    service.stop(service.principal("bob"), "one")
    status_is(service, "one", "STOPPED")


def test_lagging_when_offsets_behind_pass_the_threshold(supervised):
    service = supervised(lagging_offsets=100)
    submit(service, description="lag:500")
    job = status_is(service, "surge", "LAGGING")
    assert job["metrics"]["offsets_behind_latest"] == 500
    assert "lagging" in actions(service) and "running" not in actions(service)


def test_a_hung_run_is_killed_and_retried(supervised):
    service = supervised(heartbeat_timeout_s=1.5, max_failures=1)
    submit(service, description="hang")
    job = status_is(service, "surge", "FAILED")
    assert "hung" in actions(service) and "killed as hung" in job["last_error"]


def test_a_held_lease_backs_off_without_a_second_driver(supervised, tmp_path):
    checkpoint = tmp_path / "state" / "checkpoints" / "surge" / "v1"
    checkpoint.mkdir(parents=True)
    with open(checkpoint / ".dagger-lease", "a+") as lease:
        fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another driver holds it
        service = supervised(max_failures=5, backoff_s=0.3)
        submit(service)
        wait_for(lambda: "lease-held" in actions(service), what="a lease-held event")
        job = status_is(service, "surge", "BACKING_OFF", "STARTING")
        assert [r.exit_code for r in runs(service) if r.ended_at] == [3] * len(
            [r for r in runs(service) if r.ended_at]
        )
        assert "held by another driver" in job["last_error"]
    status_is(service, "surge", "RUNNING")
    assert sum(1 for r in runs(service) if r.ended_at is None) == 1


def test_one_supervisor_per_state_folder_and_a_standby_takes_over(supervised, make_service):
    first = supervised()
    submit(first)
    pid = status_is(first, "surge", "RUNNING")["run"]["pid"]
    second = make_service(tick_s=0.1, heartbeat_s=0.2, policy=FAST)
    assert not second.start_supervisor() and not second.supervising
    first.stop_supervisor()
    wait_for(lambda: second.supervising, what="the standby to take over")
    wait_for(lambda: "reattach" in actions(second), what="a reattach event")
    second.stop(second.principal("bob"), "surge")
    status_is(second, "surge", "STOPPED")
    assert [r.pid for r in runs(second)] == [pid]


def _serve(state: Path, database_url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(workbench.__file__).resolve().parent.parent)}
    script = Path(__file__).parent / "fixtures" / "serve_supervisor.py"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(state), database_url],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_killing_the_service_leaves_jobs_running_and_a_new_one_reattaches(
    make_service, tmp_path, database_url
):
    service = make_service()  # serves the API only; the subprocess supervises
    state = tmp_path / "state"
    server = _serve(state, database_url)
    try:
        submit(service, "one")
        submit(service, "two")
        pids = {n: status_is(service, n, "RUNNING")["run"]["pid"] for n in ("one", "two")}
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        for name, pid in pids.items():
            assert procs.alive(pid, runs(service, name)[0].run_dir), name
        server = _serve(state, database_url)
        wait_for(lambda: "reattach" in actions(service, "two"), what="re-attach events")
        for name, pid in pids.items():
            job = status_is(service, name, "RUNNING")
            assert job["run"]["pid"] == pid
            assert actions(service, name).count("spawn") == 1, "a second driver was spawned"
        assert len(runs(service, "one")) == len(runs(service, "two")) == 1
        # a run that died while nobody supervised is ended and retried
        service.stop(service.principal("bob"), "one")
        status_is(service, "one", "STOPPED")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        os.killpg(pids["two"], signal.SIGKILL)
        wait_for(lambda: not procs.alive(pids["two"], runs(service, "two")[0].run_dir))
        server = _serve(state, database_url)
        wait_for(lambda: len(runs(service, "two")) == 2, what="a new run of two")
        lost = runs(service, "two")[0]
        assert (lost.end_reason, lost.exit_code) == ("lost", None)
        assert status_is(service, "two", "RUNNING")["failures"] == 1
    finally:
        server.kill()
        server.wait(timeout=10)
        kill_runs(service)


def test_leftovers_of_a_dead_leader_are_killed_but_not_a_reused_pid():
    group = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    member = int(group.stdout.readline())
    os.kill(group.pid, signal.SIGKILL)
    group.wait()
    assert os.getpgid(member) == group.pid  # the member outlives its leader
    procs.kill_leftovers(group.pid)
    wait_for(lambda: not Path(f"/proc/{member}").exists() or _zombie(member))
    reused = subprocess.Popen(["sleep", "60"], start_new_session=True)  # a live leader
    try:
        procs.kill_leftovers(reused.pid)
        assert reused.poll() is None, "a live process with the pid was killed"
    finally:
        reused.kill()
        reused.wait()


def _zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
