"""Result fixtures: dagger SQL run on real Spark over small recordings, rows compared."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from workbench import engine
from workbench.lab.results import json_lines
from workbench.sources import bounded

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "results.yaml").read_text())


def _same(actual, expected, tol: float) -> bool:
    if isinstance(expected, float) or isinstance(actual, float):
        return isinstance(actual, int | float) and math.isclose(actual, expected, rel_tol=tol)
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_same(a, e, tol) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_same(actual[k], expected[k], tol) for k in expected)
        )
    return actual == expected


def _unmatched(actual: list, expected: list, tol: float) -> tuple[list, list]:
    left = list(actual)
    missing = []
    for row in expected:
        hit = next((i for i, a in enumerate(left) if _same(a, row, tol)), None)
        if hit is None:
            missing.append(row)
        else:
            left.pop(hit)
    return missing, left


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["title"])
def test_result_rows(case, spark, tmp_path):
    inputs = []
    for table, rows in (case.get("tables") or {}).items():
        path = tmp_path / f"{table}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        inputs.append(engine.Input(table, bounded.read(spark, str(path)).frame))
    plan = engine.build(spark, case["sql"], inputs, job="fixture")
    actual = [json.loads(line) for line in json_lines(plan.result)]
    missing, extra = _unmatched(actual, case["rows"], case.get("tolerance", 1e-9))
    assert not missing and not extra, f"missing {missing}, unexpected {extra}"
