"""Run a chaos scenario: replay the revert journal, a control run, then each case.

A case runs its load in a thread while the probes sample; ``start_after`` into the load
its fault is applied (written to the journal), ``downtime`` later reverted (marked in the
journal) — in a ``finally``, so an error or Ctrl-C reverts it too; SIGTERM and SIGHUP
are turned into the same interrupt while a scenario runs, and an interrupt waits while a
fault is being applied and journaled, or reverted (workbench/chaos/interrupts.py). After
the load, the case waits (up to the scenario's ``recovery_timeout``) until the system is
healthy again: the broker answers and, with a job, the job runs, has finished a
micro-batch, with no offsets behind latest. The result is a plain dict (JSON) per case,
ready for the ledger and the report.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any

from workbench.chaos.blast import resolve
from workbench.chaos.faults import FAULTS
from workbench.chaos.interrupts import INTERRUPTS
from workbench.chaos.journal import RevertJournal
from workbench.chaos.load import drive
from workbench.chaos.probes import Prober
from workbench.exceptions import WorkbenchError
from workbench.kafka.admin import create_topics

if TYPE_CHECKING:
    from workbench.chaos.env import ChaosEnv
    from workbench.chaos.scenario import Case, Scenario


def run_scenario(
    scenario: Scenario, env: ChaosEnv, journal: RevertJournal | None = None
) -> dict[str, Any]:
    """Every case of ``scenario`` (after a control run when it asks for one)."""
    journal = journal or RevertJournal()
    with INTERRUPTS.installed():
        replayed = journal.replay(env)
        runs = []
        if scenario.control:
            runs.append(run_case(scenario.cases[0], env, journal, scenario, control=True))
        runs.extend(run_case(case, env, journal, scenario) for case in scenario.cases)
    out = {"scenario": scenario.model_dump(), "replayed": replayed, "runs": runs}
    if scenario.ledgers:
        from workbench.chaos.ledger import job_watermark, scenario_ledger

        def watermark() -> float | None:  # the job under test's, when there is one
            try:
                return job_watermark(env.job_view()) if env.client and env.job else None
            except Exception:  # noqa: BLE001 - a service that does not answer: the delay
                return None

        out["ledgers"] = [
            scenario_ledger(runs, spec, watermark).as_dict() for spec in scenario.ledgers
        ]
    return out


def run_case(
    case: Case,
    env: ChaosEnv,
    journal: RevertJournal,
    scenario: Scenario,
    control: bool = False,
) -> dict[str, Any]:
    """One case (``control``: its load without the fault)."""
    from dataclasses import replace

    targets = resolve(env.client, case.blast_radius, env.job, scenario.team, case.cluster)
    env = replace(env, jobs=targets)
    # the load's topic exists before the fault's clock starts: created by the load itself,
    # a slow start put its creation in the broker's downtime and failed the whole load (a
    # broker already unreachable here fails the load, which says so in the report)
    created = False
    with contextlib.suppress(WorkbenchError):
        create_topics(env.bootstrap, {case.load.topic: case.load.partitions})
        created = True
    t0, wall0 = time.monotonic(), time.time()
    timeline: list[dict[str, Any]] = []

    def mark(event: str, **detail: Any) -> None:
        timeline.append({"t": round(time.monotonic() - t0, 3), "event": event, **detail})

    prober = Prober(env, case.load.topic, t0).start()
    loaded: dict[str, Any] = {}
    loader = threading.Thread(target=_load, args=(env, case, loaded, created), daemon=True)
    mark("load started", rate=case.load.rate, duration_s=case.load.duration)
    loader.start()
    try:
        if not control:
            _fault_window(case, env, journal, mark)
        loader.join()
        mark("load finished")
        recovered = _recover(prober, scenario.recovery_timeout)
        mark("recovered" if recovered else "not recovered")
    finally:
        samples = prober.stop()
    result = loaded.get("result")
    return {
        "case": case.name,
        "control": control,
        "started_epoch": wall0,
        "fault": None if control else case.fault,
        "blast_radius": {"kind": case.blast_radius, "jobs": targets},
        "params": {} if control else case.params,
        "timeline": timeline,
        "samples": samples,
        "load": result.as_dict() if result else None,
        "load_error": loaded.get("error"),
        "recovered": recovered,
        "recovery_s": _recovery_s(timeline),
    }


def _load(env: ChaosEnv, case: Case, into: dict[str, Any], created: bool) -> None:
    try:
        plan = case.load.plan()
        into["result"] = drive(env.bootstrap, plan, job=env.job, create_topic=not created)
    except Exception as err:  # noqa: BLE001 - reported in the case's result
        into["error"] = str(err)


def _fault_window(case: Case, env: ChaosEnv, journal: RevertJournal, mark) -> None:
    """Apply the case's fault ``start_after`` into the load; revert it ``downtime`` later,
    whatever happens meanwhile."""
    fault = FAULTS.get(case.fault)
    time.sleep(case.start_after)
    applied: tuple[dict[str, Any], str] | None = None
    try:
        # a Ctrl-C while the fault acts comes once the journal knows it, inside this ``try``
        with INTERRUPTS.held():
            record = fault.apply(env, case.params)
            applied = record, journal.applied(case.fault, record)
            mark("fault applied", fault=case.fault, params=case.params)
        time.sleep(case.downtime)
    finally:
        if applied is not None:  # an apply that raised changed nothing to revert
            with INTERRUPTS.held():
                mark("fault reverting", fault=case.fault)  # a restart may take a while
                fault.revert(applied[0], env)
                journal.reverted(applied[1])
                mark("fault reverted", fault=case.fault)


def _recover(prober: Prober, timeout: float) -> bool:
    """Wait until the broker answers and the job (if any) runs with nothing left to read."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _healthy(prober.sample()):
            return True
        time.sleep(prober.interval)
    return False


def _healthy(sample: dict[str, Any]) -> bool:
    if sample.get("broker_ms") is None:
        return False
    if "records" not in sample:  # no job under test
        return True
    # a run that has not finished a batch yet shows lag 0 too: it has measured nothing
    running = sample.get("status") == "RUNNING" and (sample.get("batches") or 0) > 0
    return running and sample.get("lag") == 0


def _recovery_s(timeline: list[dict[str, Any]]) -> float | None:
    """Seconds from the start of the fault's revert (a broker restart included) to recovery
    (from the load's end for a control)."""
    times = {e["event"]: e["t"] for e in timeline}
    if "recovered" not in times:
        return None
    start = times.get("fault reverting", times.get("load finished", 0.0))
    return round(times["recovered"] - start, 3)
