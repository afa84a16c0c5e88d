"""SIGTERM interrupts a scenario as Ctrl-C does, but never inside a held block (a fault
being applied and journaled, or reverted): there it interrupts right after."""

from __future__ import annotations

import os
import signal

import pytest

from workbench.chaos.faults import Fault
from workbench.chaos.interrupts import Interrupts

pytestmark = pytest.mark.unit


def test_sigterm_inside_a_held_block_interrupts_once_the_block_is_done():
    interrupts, steps = Interrupts(), []
    with pytest.raises(KeyboardInterrupt, match="signal 15"), interrupts.installed():
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("journaled")
        steps.append("slept")
    assert steps == ["journaled"]


def test_sigterm_outside_a_held_block_interrupts_at_once_and_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM)
    interrupts, steps = Interrupts(), []
    with pytest.raises(KeyboardInterrupt), interrupts.installed():
        os.kill(os.getpid(), signal.SIGTERM)
        steps.append("went on")
    assert steps == [] and signal.getsignal(signal.SIGTERM) is before


def test_nested_held_blocks_interrupt_after_the_outer_one():
    interrupts, steps = Interrupts(), []
    with pytest.raises(KeyboardInterrupt), interrupts.installed():
        with interrupts.held():
            with interrupts.held():
                os.kill(os.getpid(), signal.SIGHUP)
            steps.append("inner done")
        steps.append("after")
    assert steps == ["inner done"]


class SignalledWhileApplying(Fault):
    """A fault during whose apply SIGTERM arrives (as it did, in CI, while a broker kill
    waited for the broker to be gone)."""

    name, type = "test_signalled_while_applying", "kafka"
    reverted: list[dict] = []

    def apply(self, env, params):
        os.kill(os.getpid(), signal.SIGTERM)
        return {"applied": True}

    def revert(self, record, env):
        self.reverted.append(record)


def test_sigterm_while_a_fault_is_applied_still_reverts_it(tmp_path, request):
    from workbench.chaos.faults import FAULTS
    from workbench.chaos.interrupts import INTERRUPTS
    from workbench.chaos.journal import RevertJournal
    from workbench.chaos.runner import _fault_window
    from workbench.chaos.scenario import Case

    fault = SignalledWhileApplying()  # registered for this test only
    FAULTS.add(fault.name, fault)
    request.addfinalizer(lambda: FAULTS.remove(fault.name))
    load = {"topic": "t", "message": "bookings", "rate": 1, "duration": "1s"}
    case = Case(name="c", type="kafka", fault=SignalledWhileApplying.name, start_after=0,
                downtime=60, load=load)  # fmt: skip
    journal, events = RevertJournal(tmp_path / "journal.jsonl"), []
    with pytest.raises(KeyboardInterrupt), INTERRUPTS.installed():
        _fault_window(case, None, journal, lambda event, **_: events.append(event))
    assert SignalledWhileApplying.reverted == [{"applied": True}]
    assert events == ["fault applied", "fault reverting", "fault reverted"]
    assert journal.pending() == []
