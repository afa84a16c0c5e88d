"""The quality page and API of a real ``workbench serve`` (its jobs the stand-in job
program): a submitted ``kind: quality`` job's rows per topic, team rules, and the HTML page
(drawn in headless Chromium with the network off: artifacts/quality-page.png)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml
from healthkit import fake_serve
from servekit import headers, stop_jobs
from services_browser import recorded_page

from workbench.quality import history

SPEC = {
    "kind": "quality",
    "streams": [
        {
            "topics": ["bookings"],
            "message": "esb.booking.BookingLogMessage",
            "bootstrap_servers": "127.0.0.1:1",
        }
    ],
}
T0 = 1_790_000_400_000  # a 10-minute boundary
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def rows(topic: str):
    for n in range(3):
        yield {
            "window_timestamp": datetime.fromtimestamp((T0 + n * 600_000) / 1000, UTC),
            "tag_topic": topic,
            "total": 100 + n,
            "unique": 100 + n,
            "expected": 110,
            "missing": 10 - n,
            "completeness": (100 + n) / 110,
            "score": 90.0 + n,
            "publish_latency_p50_ms": 1000.0,
            "emitted_batch": n,
        }


def test_quality_api_and_page(tmp_path, chromium):
    import requests

    served = fake_serve(tmp_path / "state")
    try:
        spec = yaml.safe_dump({"name": "bookings-quality", **SPEC})
        body = {"name": "bookings-quality", "team": "pricing", "spec_yaml": spec}
        answer = served.call("POST", "jobs", "alice", body)
        assert answer.status_code == 201, answer.text
        checkpoint = answer.json()["checkpoint"]
        history.append(checkpoint, rows("bookings"))
        history.append(
            checkpoint, [{**next(iter(rows("bookings"))), "total": 105, "emitted_batch": 7}]
        )  # window 0 emitted again

        listing = served.call("GET", "quality", "alice").json()["topics"]
        assert [(t["topic"], t["job"], t["latest"]["score"]) for t in listing] == [
            ("bookings", "bookings-quality", 92.0)
        ]
        assert served.call("GET", "quality", "bob").json() == {"topics": []}  # another team

        one = served.call("GET", "quality/bookings?hours=1000000", "alice").json()
        assert [r["total"] for r in one["rows"]] == [105, 101, 102]
        assert one["jobs"][0]["job"] == "bookings-quality"
        missing = served.call("GET", "quality/booking", "alice")
        assert missing.status_code == 404 and "bookings?" in missing.text
        assert served.call("GET", "quality/bookings", "bob").status_code == 404
        assert served.call("GET", "quality/bookings?hours=x", "alice").status_code == 400

        page = requests.get(
            f"{served.url.rstrip('/')}/workbench/quality/bookings?hours=1000000",
            headers=headers("alice"),
            timeout=30,
        )
        assert page.status_code == 200 and "text/html" in page.headers["Content-Type"]
        assert (
            "Data quality: bookings" in page.text and page.text.count("<svg") == 5
        )  # processing latency: no data
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]

        drawn = recorded_page(chromium, headers=headers("alice"))  # as a browser shows it
        drawn.goto(f"{served.url.rstrip('/')}/workbench/quality/bookings?hours=1000000")
        assert drawn.locator("svg.chart").count() == 5
        assert drawn.locator("table.windows tr").count() == 4  # the heading and 3 windows
        ARTIFACTS.mkdir(exist_ok=True)
        drawn.screenshot(path=str(ARTIFACTS / "quality-page.png"), full_page=True)
        assert [u for u in drawn.requests if not u.startswith("http://127.0.0.1")] == []
        assert drawn.problems == []
    finally:
        stop_jobs(served, "root")
        served.stop()
