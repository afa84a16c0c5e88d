"""SIGTERM interrupts a scenario as Ctrl-C does, but never inside a held block (a fault
being applied and journaled, or reverted): there it interrupts right after."""

from __future__ import annotations

import os
import signal

import pytest

from workbench.chaos.interrupts import Interrupts


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
