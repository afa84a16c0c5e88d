"""The dev Spark standalone cluster, for real: start, status, idempotence, stop, crash."""

from __future__ import annotations

import pytest
from cli_runner import workbench

from workbench.dev.spark import SparkCluster, master_json
from workbench.exceptions import SetupError

pytestmark = pytest.mark.integration


def test_cli_up_status_down(tmp_path):
    state = tmp_path / "spark"
    up = workbench("dev", "spark", "up", "--workers", "1", "--state-dir", state, timeout=180)
    assert up.returncode == 0, up.stderr
    assert "1/1 workers alive" in up.stdout
    status = SparkCluster(state, workers=1).status()
    assert status.running and status.alive_workers == 1
    assert status.master_url.startswith("spark://127.0.0.1:")
    info = master_json(int(status.webui_url.rpartition(":")[2]))
    assert info and info["status"] == "ALIVE" and info["url"] == status.master_url
    assert (state / "master.log").exists() and (state / "worker-1").is_dir()

    again = workbench("dev", "spark", "up", "--workers", "1", "--state-dir", state)
    assert again.returncode == 0 and status.master_url in again.stdout  # the same cluster
    other = workbench("dev", "spark", "up", "--workers", "3", "--state-dir", state)
    assert other.returncode == 1 and "workbench dev spark down" in other.stderr

    assert workbench("dev", "spark", "down", "--state-dir", state).returncode == 0
    gone = workbench("dev", "spark", "status", "--state-dir", state)
    assert gone.returncode == 3 and "not running" in gone.stdout
    assert not any(SparkCluster(state).status().pids.values())


def test_kill_leaves_nothing_running(tmp_path):
    cluster = SparkCluster(tmp_path / "spark", workers=1)
    cluster.start()
    pids = dict(cluster.status().pids)
    cluster.kill()
    assert not cluster.status().running
    other = SparkCluster(tmp_path / "spark", workers=1)  # another process's view
    assert not any(other._alive(pid, name) for name, pid in pids.items())
    cluster.start()  # a new master and worker over the stale state
    assert cluster.status().alive_workers == 1
    cluster.stop()


def test_worker_that_cannot_start_is_reported(tmp_path):
    with pytest.raises(SetupError, match="worker-1"):
        SparkCluster(tmp_path / "spark", workers=1, memory="not-a-size").start(timeout=60)


def test_status_of_a_folder_with_no_cluster(tmp_path):
    status = SparkCluster(tmp_path / "none").status()
    assert not status.running and status.master_url == "" and status.pids == {}
    assert master_json(0) is None
    done = workbench("dev", "spark", "status", "--json", "--state-dir", tmp_path / "none")
    assert done.returncode == 3 and '"running": false' in done.stdout


def test_cli_up_on_the_ports_given(tmp_path):
    """`dev spark up` had no port options: a firewall or a job service config naming the
    master's port could not be met. Given ports are used (the master's, its web UI's and
    the workers'); a port in use is one line naming the option."""
    import socket

    from workbench.dev.ports import free_port_run, free_ports

    state = tmp_path / "spark"
    master, webui = free_ports(2)
    worker = free_port_run(2)
    ports = ("--master-port", master, "--webui-port", webui, "--worker-port", worker)
    up = workbench("dev", "spark", "up", "--workers", 1, *ports, "--state-dir", state, timeout=180)
    assert up.returncode == 0, up.stderr
    assert f"spark master at spark://127.0.0.1:{master} (1/1 workers alive; web UI " in up.stdout
    try:
        info = master_json(webui)
        assert info and info["url"] == f"spark://127.0.0.1:{master}"
        assert [w["host"] + ":" + str(w["port"]) for w in info["workers"]] == [
            f"127.0.0.1:{worker}"
        ]
        other = workbench("dev", "spark", "up", "--workers", 1, "--master-port", master + 1,
                          "--state-dir", state)  # fmt: skip
        assert other.returncode == 1 and f"port {master}, not {master + 1}" in other.stderr
    finally:
        assert workbench("dev", "spark", "down", "--state-dir", state).returncode == 0

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        busy = workbench("dev", "spark", "up", "--master-port", taken, "--state-dir", state)
    assert busy.returncode == 1
    assert busy.stderr.strip().splitlines() == [
        f"error: Port {taken} on 127.0.0.1 is in use: give another --master-port, or leave "
        "it out for a free one."
    ]
