"""The demo generator's speed: events a second per kind, as a multiple of the demo's rate.

`workbench demo` and `workbench load` pace the seeded :class:`~workbench.dev.generator.Generator`
to the wall clock, so it must make events many times faster than they are sent. Each kind
is taken once to warm up, then ``--events`` per kind, best of ``--rounds``; CPU time of
this process, so the figure is the generator's own cost.

    .venv/bin/python benchmarks/generator_rate.py [--events 50000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from workbench.dev.demo import DemoOptions
from workbench.dev.generator import MESSAGES, Generator

START = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def rate(kind: str, events: int, rounds: int) -> float:
    """Best events per CPU-second over ``rounds`` fresh generators."""
    best = 0.0
    for seed in range(rounds):
        gen = Generator(seed=seed, start=START, rate_per_s=500, out_of_order_seconds=3)
        gen.take(kind, 1000)  # warm-up
        started = time.process_time()
        assert len(gen.take(kind, events)) == events
        best = max(best, events / max(time.process_time() - started, 1e-9))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    demo = DemoOptions().rate
    head = f"generator: {args.events:,} events per kind, best of {args.rounds}"
    print(f"{head}; demo rate {demo:g}/s")
    for kind in MESSAGES:
        per_s = rate(kind, args.events, args.rounds)
        print(f"  {kind:14} {per_s:>10,.0f} events/CPU-s = {per_s / demo:6.0f}x the demo's rate")


if __name__ == "__main__":
    main()
