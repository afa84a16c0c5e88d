"""Test tiers: every test runs in exactly one of ``unit``, ``integration``, ``e2e``, ``lab``
and ``packaging`` (``pytest -m unit`` is ``make test-fast``).

A test's tier comes from the servers it asks for: a test that uses a fixture of
:data:`SERVICE_FIXTURES` (the ``spark`` session, ``kafka_broker``, ``chromium`` ...) takes that
fixture's tier; with several, the last of :data:`TIERS` wins (a kernel and Spark: ``lab``).
Where fixtures cannot tell (a test that runs ``workbench validate``, which starts Spark, or
starts a ``Broker`` or ``workbench serve`` itself) a mark says it: ``@pytest.mark.<tier>`` on
the test (or a ``pytest.param``), or ``pytestmark = pytest.mark.<tier>`` on its file. A
file's or class's ``unit`` is the tier of its tests that use no server fixture and carry no
mark of their own. Collection fails for a test with no tier, with two marked tiers, or
marked ``unit`` itself while it uses a server fixture.

The guard keeps ``unit`` true: while a unit test sets up or runs, starting a JVM (``java``,
``javac``, Spark's launchers, Maven), a browser, a Jupyter kernel or server, a database or
time-series server or ``workbench serve`` fails the test, naming the tier to mark instead,
even when the code catches the error. A JVM started further down (by a ``workbench`` process
the test runs) refuses to start: ``JAVA_TOOL_OPTIONS`` carries an option it does not know,
named for the fix. What the guard cannot see: a unit test using a Spark session an earlier
test of the same worker left running; ``make test-fast`` starts none, so it fails there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

#: the tiers, registered with what each needs in pyproject.toml; the order breaks ties
TIERS = ("unit", "integration", "e2e", "lab", "packaging")

#: fixture -> the tier of a test that uses it
SERVICE_FIXTURES = {
    "spark": "integration",
    "kafka_broker": "integration",
    "spark_cluster": "integration",
    "influxdb_v1": "integration",
    "victoria_metrics": "integration",
    "postgres_server": "integration",
    "kafka_cluster3": "e2e",
    "kafka_mirror": "e2e",
    "proxied_broker": "e2e",
    "served": "e2e",
    "workbench_kernel": "lab",
    "chromium": "lab",
}

#: parametrized fixture -> {parameter: tier} (``database_url`` asks for PostgreSQL by name)
SERVICE_PARAMS = {"database_url": {"postgresql": "integration"}}


def pytest_configure(config):
    registered = {line.partition(":")[0].strip() for line in config.getini("markers")}
    missing = [tier for tier in TIERS if tier not in registered]
    if missing:
        raise pytest.UsageError(f"tiers not registered in pyproject.toml's markers: {missing}")
    sys.addaudithook(_audit)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A file (or class) with a test of no tier or two fails to collect, naming them."""
    report = yield
    problems: dict[str, list[str]] = {}
    for item in report.result if report.passed else ():
        if isinstance(item, pytest.Item):
            problem = tier_of(item)[1]
            if problem:
                problems.setdefault(problem, []).append(item.name)
    if problems:
        lines = [f"{problem}:\n    " + "\n    ".join(ids) for problem, ids in problems.items()]
        report.outcome, report.result = "failed", []
        report.longrepr = "test tiers (tests/tiers.py):\n  " + "\n  ".join(lines) + _HOW
    return report


_HOW = (
    "\nMark the test, its class or its file (pytestmark = pytest.mark.<tier>) with one of: "
    + ", ".join(TIERS)
)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the marks given here
def pytest_collection_modifyitems(config, items):
    tiers = {item: tier_of(item)[0] for item in items}
    for item, tier in tiers.items():  # the tier moves onto the test, alone
        for node in item.listchain():
            node.own_markers[:] = [mark for mark in node.own_markers if mark.name not in TIERS]
        item.add_marker(tier)


def tier_of(item) -> tuple[str, str | None]:
    """``(tier, problem)``: the item's tier, or why it has none or two. ``unit`` on a module
    or class is the tier of its tests that neither use a server fixture nor say another."""
    own = {mark.name for mark in item.own_markers if mark.name in TIERS}
    marked = {mark.name for mark in item.iter_markers() if mark.name in TIERS} - {"unit"}
    served = served_tiers(item)
    if len(own) > 1 or len(marked) > 1:
        return "", f"two tiers marked: {', '.join(sorted(own | marked))}"
    if own == {"unit"} and (served or marked):
        return "", f"marked unit but {_names(served) or 'its file or class says ' + marked.pop()}"
    if marked:
        return marked.pop(), None
    if served:
        return max(served.values(), key=TIERS.index), None
    if any(mark.name == "unit" for mark in item.iter_markers()):
        return "unit", None
    return "", "no tier (and none of the server fixtures that tell one)"


def served_tiers(item) -> dict[str, str]:
    """What the item asks for that makes it more than a unit test: {what: tier}."""
    names = getattr(item, "fixturenames", ())
    found = {name: SERVICE_FIXTURES[name] for name in names if name in SERVICE_FIXTURES}
    params = getattr(getattr(item, "callspec", None), "params", {})
    for name, tiers in SERVICE_PARAMS.items():
        if params.get(name) in tiers:
            found[f"{name}[{params[name]}]"] = tiers[params[name]]
    return found


def _names(served: dict[str, str]) -> str:
    return ", ".join(f"uses {name} ({tier})" for name, tier in sorted(served.items()))


# --- the guard: a unit test starts nothing of the other tiers ----------------------------

#: program (the basename of what a process runs, or a word of its command line) -> tier
PROGRAMS = {
    "java": "integration",
    "javac": "integration",
    "mvn": "integration",
    "spark-submit": "integration",
    "spark-class": "integration",
    "pyspark": "integration",
    "postgres": "integration",
    "initdb": "integration",
    "pg_ctl": "integration",
    "influxd": "integration",
    "victoria-metrics": "integration",
    "chromium": "lab",
    "chrome": "lab",
    "headless_shell": "lab",
    "run-driver": "lab",  # Playwright's driver, which starts the browser
    "ipykernel_launcher": "lab",
    "ipykernel": "lab",
    "jupyter": "lab",
    "jupyter-lab": "lab",
    "jupyter_server": "lab",
    "voila": "lab",
}
_TRIPWIRE = "-XX:+AUnitTestStartedThisJVM_MarkItIntegration"


class _Watch:
    """The unit test under the guard (None between unit tests) and what it started."""

    nodeid: str | None = None
    seen: list[str] = []


def started(argv: list[str]) -> tuple[str, str] | None:
    """``(program, tier)`` when ``argv`` starts something a unit test must not."""
    words = [Path(word).name for word in argv]
    if words and words[0] in PROGRAMS:
        return words[0], PROGRAMS[words[0]]
    for word in words[1:]:
        word = word.removesuffix(".py")
        if word in PROGRAMS and PROGRAMS[word] == "lab":
            return word, "lab"
    if "serve" in words and any(word.startswith("workbench") for word in words):
        return "workbench serve", "e2e"  # the job service as a server
    return None


def _audit(event: str, args: tuple) -> None:
    nodeid = _Watch.nodeid
    if nodeid is None:
        return
    argv = _argv(event, args)
    if argv is None:
        return
    found = started(argv)
    if found is None:
        return
    program, tier = found
    message = (
        f"{nodeid} is a unit test but started {program} ({' '.join(argv)[:160]} ...): "
        f"mark it @pytest.mark.{tier} (or its file: pytestmark = pytest.mark.{tier}), or ask "
        "for the fixture that starts it (tests/tiers.py, SERVICE_FIXTURES)"
    )
    _Watch.seen.append(message)
    raise TierError(message)


def _argv(event: str, args: tuple) -> list[str] | None:
    try:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv)
            words = [os.fsdecode(word) for word in argv]
            if executable is not None:
                words[:1] = [os.fsdecode(executable)]
            return words
        if event in ("os.exec", "os.posix_spawn", "os.spawn"):
            return [os.fsdecode(word) for word in args[1]]
        if event == "os.system":
            return os.fsdecode(args[0]).split()
    except Exception:  # an argument shape this guard does not know: not its business
        return None
    return None


class TierError(RuntimeError):
    """A ``unit`` test started what its tier excludes."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guarded(item))


def _guarded(item):
    """Run a phase of ``item`` under the guard when it is a unit test; fail it afterwards if
    it started something, even when the code caught the guard's error."""
    if not any(mark.name == "unit" for mark in item.iter_markers()):
        return (yield)
    _Watch.nodeid, _Watch.seen = item.nodeid, []
    before = os.environ.get("JAVA_TOOL_OPTIONS")
    os.environ["JAVA_TOOL_OPTIONS"] = f"{before} {_TRIPWIRE}" if before else _TRIPWIRE
    try:
        result = yield
    finally:
        _Watch.nodeid = None
        if before is None:
            os.environ.pop("JAVA_TOOL_OPTIONS", None)
        else:
            os.environ["JAVA_TOOL_OPTIONS"] = before
    if _Watch.seen:
        pytest.fail(_Watch.seen[0], pytrace=False)
    return result
