"""Team-wide notifiers in ``service.yaml``: checked when the service loads its config."""

from __future__ import annotations

import pytest
import yaml

from workbench.exceptions import SpecError
from workbench.jobs.config import ServiceConfig

pytestmark = pytest.mark.unit


def test_team_notifiers_are_read_and_checked(tmp_path):
    hook = {"type": "webhook", "url": "http://127.0.0.1:9/hook", "send_resolved": False}
    (tmp_path / "service.yaml").write_text(
        yaml.safe_dump({"notifiers": {"pricing": {"oncall": hook}}})
    )
    config = ServiceConfig.load(tmp_path)
    assert config.notifiers == {"pricing": {"oncall": hook}}
    (tmp_path / "service.yaml").write_text(
        yaml.safe_dump({"notifiers": {"pricing": {"oncall": {"type": "pager"}}}})
    )
    with pytest.raises(SpecError, match="notifier 'oncall'.*pager"):
        ServiceConfig.load(tmp_path)
