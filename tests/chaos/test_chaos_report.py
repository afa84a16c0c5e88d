"""The report of a real run (a latency case on the proxied broker, with a ledger that
lost a window) renders in headless Chromium without a console error or a request."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import datetime

from services_browser import recorded_page

from workbench.chaos.env import ChaosEnv
from workbench.chaos.journal import RevertJournal
from workbench.chaos.ledger import balance, produced_windows
from workbench.chaos.report import write_report
from workbench.chaos.runner import run_scenario
from workbench.chaos.scenario import Scenario


def test_the_report_renders_offline(chaos_broker, chromium, tmp_path):
    broker, proxy = chaos_broker
    load = {"topic": f"report-{uuid.uuid4().hex[:6]}", "message": "bookings", "rate": 100,
            "duration": "4s", "seed": 2}  # fmt: skip
    case = {"name": "slow", "type": "network", "fault": "latency", "params": {"ms": 250},
            "start_after": "1s", "downtime": "2s", "load": load}  # fmt: skip
    scenario = Scenario(name="report <test>", hypothesis="survives", control=False, cases=[case])
    env = ChaosEnv(proxy.address, [broker], proxy=proxy)  # as clients connect
    result = run_scenario(scenario, env, RevertJournal(tmp_path / "journal.jsonl"))
    (run,) = result["runs"]
    start = datetime.fromisoformat(run["load"]["started_at"])
    produced = produced_windows("bookings", 2, start, 100, 400, 1.0)
    landed = Counter(produced)
    landed[min(landed)] -= 1  # one record the sink never got
    run["ledger"] = balance(produced, landed, 1.0).as_dict()

    page_path = write_report(result, tmp_path / "report")
    saved = json.loads((tmp_path / "report" / "report.json").read_text())
    assert saved["passed"] is False and saved["runs"][0]["verdict"].startswith("fail: 1 window")

    page = recorded_page(chromium)
    page.set_content(page_path.read_text())  # the network is off: nothing may be fetched
    assert page.problems == [] and page.requests == []
    text = page.inner_text("body")
    assert "Chaos: report <test>" in text and "Hypothesis: survives" in text
    assert "FAIL" in text and "Lost windows: " in text and "Playbook" in text
    titles = page.eval_on_selector_all(
        "svg.chart", "els => els.map(e => e.getAttribute('aria-label'))"
    )
    assert titles == ["Faults' timeline", "Throughput", "Latency"]
    assert "Lag: no job under test" in text
    assert page.locator("tr.bad").count() == 1
    page.close()
