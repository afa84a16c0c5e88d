"""The test files' order: longest first, an unknown file weighing the median."""

import pytest
from file_order import longest_first

pytestmark = pytest.mark.unit


def test_known_files_weigh_their_seconds_and_new_ones_the_median():
    known = {"tests/a.py": 300.0, "tests/b.py": 10.0, "tests/c.py": 40.0}
    weights = longest_first(["tests/a.py", "tests/new.py", "tests/b.py"], known)
    assert weights == {"tests/a.py": 300.0, "tests/new.py": 40.0, "tests/b.py": 10.0}
    assert longest_first(["tests/x.py"], {}) == {"tests/x.py": 0.0}
