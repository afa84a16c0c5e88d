"""The machine's speed at the run's start and end, printed after the run.

The same suite took 21 minutes in one hour and 54 in another on the 2-core VM, and the demo
generator made bookings at 20,700/CPU-s at 18:27 and 37,800 at 19:06 on the idle machine:
the host, not the tests, slows. A fixed workload (sorting a million floats and filling a
dict, 0.3-0.45 CPU-s) timed in the controller before the first test and after the last
tells the two apart in a log; the load average says how busy the run left the machine.
"""

from __future__ import annotations

import os
import random
import time

_probes: dict[str, tuple[float, float]] = {}


def probe() -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the fixed workload in this process."""
    numbers = random.Random(1)
    floats = [numbers.random() for _ in range(1_000_000)]
    cpu, wall = time.process_time(), time.perf_counter()
    sorted(floats)  # cache misses: where a busy host's neighbours slow us, a tight loop not
    names = {i: str(i) for i in range(500_000)}
    del names
    return time.process_time() - cpu, time.perf_counter() - wall


def _controller(config) -> bool:
    return not hasattr(config, "workerinput")  # pytest-xdist's workers have it


def pytest_sessionstart(session):
    if _controller(session.config):
        _probes["start"] = probe()


def pytest_terminal_summary(terminalreporter, config):
    if not _controller(config) or "start" not in _probes:
        return
    _probes["end"] = probe()
    terminalreporter.section("machine")
    for when, (cpu, wall) in _probes.items():
        terminalreporter.write_line(
            f"a fixed workload at the {when}: {cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} ms wall"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    terminalreporter.write_line(f"load average at the end (1, 5, 15 min): {load}")
