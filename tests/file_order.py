"""Longest test files first, so pytest-xdist's workers finish together.

``--dist loadfile`` hands whole files to workers in collection order. When a long file
comes last, one worker runs it alone while the others idle: the run takes as long as that
tail. Ordering files by their last measured time, longest first, is the classic cure
(LPT scheduling). The times are data: ``tests/durations.json`` (seconds per file, from a
full run); a file it does not know yet counts as the median. Each run writes what it
measured to ``artifacts/test-durations.json``; copy it over ``tests/durations.json`` when
files were added or changed much.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

KNOWN = Path(__file__).with_name("durations.json")
MEASURED = Path(__file__).parent.parent / "artifacts" / "test-durations.json"


def known_durations() -> dict[str, float]:
    return json.loads(KNOWN.read_text()) if KNOWN.exists() else {}


def longest_first(paths: list[str], known: dict[str, float]) -> dict[str, float]:
    """Each path's weight: its known seconds, or the median of the known ones."""
    default = statistics.median(known.values()) if known else 0.0
    return {path: known.get(path, default) for path in paths}


def pytest_collection_modifyitems(config, items):
    weights = longest_first(sorted({item.nodeid.partition("::")[0] for item in items}),
                            known_durations())  # fmt: skip
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(
        key=lambda item: (
            -weights[item.nodeid.partition("::")[0]],
            item.nodeid.partition("::")[0],
            order[id(item)],
        )
    )


def pytest_terminal_summary(terminalreporter):
    """Write the seconds each file took (setup, call and teardown of its tests)."""
    if hasattr(terminalreporter.config, "workerinput"):
        return  # an xdist worker: the controller sees every report
    seconds: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid, duration = getattr(report, "nodeid", ""), getattr(report, "duration", None)
            if nodeid and duration is not None:
                seconds[nodeid.partition("::")[0]] += duration
    if seconds:
        MEASURED.parent.mkdir(exist_ok=True)
        ranked = sorted(seconds.items(), key=lambda kv: -kv[1])
        MEASURED.write_text(json.dumps({k: round(v, 1) for k, v in ranked}, indent=1) + "\n")
