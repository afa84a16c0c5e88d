"""Bad input, tried systematically: each case in fixtures/bad/cases.yaml is one
`workbench` run that must end in one clear error line (exit 1, no traceback, short)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.unit

BAD = Path(__file__).parent / "fixtures" / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c["title"], marks=getattr(pytest.mark, c.get("tier", "unit")))
        for c in CASES
    ],
)
def test_bad_input_gives_one_clear_error(case, tmp_path):
    def fill(text: str) -> str:
        return text.replace("{bad}", str(BAD)).replace("{tmp}", str(tmp_path))

    proc = subprocess.run(
        [sys.executable, "-m", "workbench.cli.main", *map(fill, case["args"])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    err = proc.stderr.strip()
    assert proc.returncode == case.get("exit", 1), err
    assert "Traceback" not in err, err
    assert fill(case["says"]) in err, err
    lines = err.splitlines()
    assert len(lines) <= case.get("lines", 3), err
    assert len(err) <= 2000, err[:3000]
    assert proc.stdout == "", proc.stdout[:2000]
