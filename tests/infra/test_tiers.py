"""The test tiers (tests/tiers.py): every test gets one, from its server fixtures or its mark,
collection fails without one or with two, and a unit test that starts a JVM fails."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = """
import pytest

@pytest.fixture
def kafka_broker():
    return "a broker's name is enough to tell the tier"
"""


def run_pytest(folder: Path, source: str, *args: str) -> subprocess.CompletedProcess:
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_it.py").write_text(source)
    argv = [sys.executable, "-m", "pytest", "-c", str(TESTS.parent / "pyproject.toml")]
    argv += ["--rootdir", str(folder), "-p", "tiers", "-p", "no:cacheprovider", "-p", "no:xdist"]
    env = {"PYTHONPATH": f"{TESTS}:{TESTS.parent}", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [*argv, *args, str(folder)], capture_output=True, text=True, cwd=folder, env=env
    )


def test_a_file_mark_is_the_tier_of_its_tests_without_servers(tmp_path):
    source = """
import pytest

pytestmark = pytest.mark.unit

def test_pure():
    pass

def test_on_a_broker(kafka_broker):
    pass

@pytest.mark.e2e
def test_end_to_end():
    pass
"""
    for tier, chosen in [("unit", "test_pure"), ("integration", "test_on_a_broker"),
                         ("e2e", "test_end_to_end")]:  # fmt: skip
        done = run_pytest(tmp_path, source, "-m", tier, "-q", "--collect-only")
        assert done.returncode == 0, done.stdout + done.stderr
        assert [line.partition("::")[2] for line in done.stdout.splitlines() if "::" in line] == [
            chosen
        ]


def test_collection_fails_for_a_test_without_one_tier(tmp_path):
    source = """
import pytest

def test_unmarked():
    pass

@pytest.mark.unit
@pytest.mark.lab
def test_twice():
    pass

@pytest.mark.unit
def test_lies(kafka_broker):
    pass
"""
    done = run_pytest(tmp_path, source, "--collect-only")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ERROR collecting test_it.py" in done.stdout
    for problem, test in [
        ("no tier (and none of the server fixtures that tell one)", "test_unmarked"),
        ("two tiers marked: lab, unit", "test_twice"),
        ("marked unit but uses kafka_broker (integration)", "test_lies"),
    ]:
        assert f"{problem}:\n    {test}\n" in done.stdout, done.stdout
    assert "pytestmark = pytest.mark.<tier>" in done.stdout


def test_a_unit_test_that_starts_a_jvm_fails_naming_the_tier(tmp_path):
    source = """
import subprocess

import pytest

pytestmark = pytest.mark.unit

def test_swallows_the_error():
    try:
        subprocess.run(["java", "-version"])
    except Exception:
        pass

def test_starts_python():
    subprocess.run(["python3", "-c", "pass"], check=True)
"""
    done = run_pytest(tmp_path, source, "-q")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "test_swallows_the_error is a unit test but started java" in done.stdout
    assert "mark it @pytest.mark.integration" in done.stdout


@pytest.mark.parametrize(
    "argv, tier",
    [
        (["/usr/lib/jvm/bin/java", "-cp", "x", "kafka.Kafka"], "integration"),
        (["/opt/spark/bin/spark-submit", "pyspark-shell"], "integration"),
        (["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "k.json"], "lab"),
        (["node", "/x/playwright/driver/package/cli.js", "run-driver"], "lab"),
        (["/usr/bin/python3", "-m", "workbench.cli.main", "serve", "--port", "0"], "e2e"),
        (["/usr/bin/python3", "-m", "workbench.cli.main", "validate", "spec.yaml"], None),
        (["git", "status"], None),
    ],
)
def test_what_a_unit_test_may_not_start(argv, tier):
    from tiers import started

    found = started(argv)
    assert (found[1] if found else None) == tier
