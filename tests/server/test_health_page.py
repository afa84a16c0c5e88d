"""A job's health page from a real ``workbench serve`` (jobs: the stand-in job program,
whose micro-batches carry made-up figures): drawn in headless Chromium with the network
off, authorized as the API is, linked from ``jobs show``; under Jupyter's base_url; and
a real Spark job's output series read back from its real InfluxDB 1.x sink."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from cli_runner import workbench
from healthkit import fake_serve, fake_state, headers, page_url, submit, wait_batches
from polling import wait_for
from servekit import TOKENS, start_serve, write_state
from services_browser import recorded_page
from streaming import influx_v1_rows, influx_v1_sink, new_topic, publish_events, surge_spec

pytestmark = pytest.mark.unit

SCREENSHOTS = Path("/tmp/a4")
BATCH_CHARTS = (
    "Input and processed rate",
    "Batch duration",
    "Offsets behind latest (as each batch was planned)",
    "Watermark delay (batch time - watermark)",
    "Late rows and dead letters per batch",
)


@pytest.fixture(scope="module")
def health_served(tmp_path_factory):
    """alice's job ``pricey`` (restarted once: two runs of its version) and bob's job."""
    served = fake_serve(tmp_path_factory.mktemp("health"))
    submit(served, "alice", "pricey", "pricing", description="lag:40")
    submit(served, "bob", "supplies", "supply")
    first = wait_batches(served, "pricey", 8)["run"]["id"]
    assert served.call("POST", "jobs/pricey/restart", "alice").status_code == 200

    def second_run() -> bool:
        job = served.call("GET", "jobs/pricey", "root").json()
        run = job["run"] or {}
        ran = (job["metrics"].get("batches") or 0) >= 8 and job["status"] == "RUNNING"
        return run.get("id") not in (None, first) and ran

    wait_for(second_run, 60, "a second run with 8 micro-batches")
    yield served
    assert served.stop() == 0


def get(url: str, user: str | None = None, **kwargs) -> requests.Response:
    return requests.get(url, headers=headers(user), timeout=30, **kwargs)


def chart(page, title: str):
    return page.locator(f'svg.chart[aria-label="{title}"]')


def test_the_page_draws_its_charts_in_chromium_offline(health_served, chromium):
    SCREENSHOTS.mkdir(exist_ok=True)
    page = recorded_page(chromium, headers=headers("alice"))
    answer = page.goto(page_url(health_served, "pricey"))
    assert answer.status == 200
    assert page.title() == "pricey health"
    assert "RUNNING" in page.locator("h1").inner_text()
    status = chart(page, "Status")
    assert {"STARTING", "RUNNING", "STOPPING"} <= set(status.locator("text").all_text_contents())
    assert status.locator("rect.span").count() >= 4
    for title in BATCH_CHARTS:
        lines = chart(page, title).locator("path.line")
        assert lines.count() >= 2, title  # the version's two runs, drawn apart
        assert chart(page, title).locator("circle.point").count() >= 16, title
        box = lines.last.bounding_box()
        assert box and box["width"] > 50, title  # a real line across the plot
    late = chart(page, "Late rows and dead letters per batch")
    assert set(late.locator("g.series").evaluate_all("gs => gs.map(g => g.dataset.name)")) == {
        "late", "dead letters"
    }  # fmt: skip
    assert "no alerts yet" in page.locator("body").inner_text()
    assert "writes to no InfluxDB sink" in page.locator("body").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "health-page.png"), full_page=True)
    assert page.problems == []
    base = health_served.url.rstrip("/")
    assert page.requests and all(url.startswith(base) for url in page.requests), page.requests
    page.close()


@pytest.mark.e2e
def test_authorization_as_for_the_api(health_served):
    url = page_url(health_served, "pricey")
    for user in ("alice", "root"):
        answer = get(url, user)
        assert answer.status_code == 200 and "<svg" in answer.text, (user, answer.text[:300])
        assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
    job_id = health_served.call("GET", "jobs/pricey", "alice").json()["id"]
    for ref in ("pricey", job_id):  # another team: not found, by name or by id
        hidden = get(page_url(health_served, ref), "bob")
        assert hidden.status_code == 404 and "that you can see" in hidden.text
        assert "<svg" not in hidden.text and hidden.headers["Content-Type"].startswith("text/html")
    assert get(page_url(health_served, "supplies"), "alice").status_code == 404
    assert get(page_url(health_served, "no-such-job"), "root").status_code == 404
    refused = get(url)
    assert refused.status_code == 401 and "Authorization: token T" in refused.text
    assert requests.get(url, params={"token": "wrong"}, timeout=30).status_code == 401
    browser_like = requests.get(url, params={"token": TOKENS["alice"]}, timeout=30)
    assert browser_like.status_code == 200 and "pricey" in browser_like.text
    assert TOKENS["alice"] not in browser_like.text


@pytest.mark.e2e
def test_jobs_show_links_the_page(health_served):
    done = workbench(
        "jobs", "show", "pricey", "--server", health_served.url, "--token", TOKENS["alice"]
    )
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("health:")]
    job_id = health_served.call("GET", "jobs/pricey", "alice").json()["id"]
    assert line.split()[1] == page_url(health_served, job_id)
    assert get(line.split()[1], "alice").status_code == 200


@pytest.mark.lab
def test_under_jupyter_base_url(tmp_path):
    from test_extension import start_hub_like, stop_jupyter

    jupyter = start_hub_like(tmp_path, fake_state(tmp_path / "state"))
    try:
        body = {"name": "lab-health", "team": "pricing", "spec_yaml": lab_spec()}
        assert jupyter.call("POST", "jobs", TOKENS["alice"], body).status_code == 201
        wait_for(
            lambda: running(jupyter.call("GET", "jobs/lab-health", TOKENS["alice"]).json()),
            60,
            "a micro-batch, RUNNING",
        )
        url = jupyter.url + "workbench/jobs/lab-health/health"
        answer = get_as(url, "alice")
        assert answer.status_code == 200 and "<svg" in answer.text, answer.text[:500]
        assert get_as(url, "bob").status_code == 404
        login = requests.get(url, allow_redirects=False, timeout=30)  # a browser: log in first
        assert login.status_code == 302 and "login" in login.headers["Location"]
        metrics = get_as(jupyter.url + "workbench/metrics", "alice")
        assert metrics.status_code == 200, metrics.text
        assert metrics.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert 'workbench_job_status{job="lab-health",team="pricing",status="RUNNING"} 1' in (
            metrics.text
        )
        assert "lab-health" not in get_as(jupyter.url + "workbench/metrics", "bob").text
        bearer = {"Authorization": f"Bearer {TOKENS['alice']}"}  # Prometheus' default type
        scraped = requests.get(jupyter.url + "workbench/metrics", headers=bearer, timeout=30)
        assert scraped.status_code == 200 and "lab-health" in scraped.text
        scraper = requests.get(jupyter.url + "workbench/metrics", allow_redirects=False, timeout=30)
        assert scraper.status_code == 403
    finally:
        jupyter.call("POST", "jobs/lab-health/stop", TOKENS["alice"])
        wait_for(
            lambda: (
                jupyter.call("GET", "jobs/lab-health", TOKENS["alice"]).json()["status"]
                == "STOPPED"
            ),
            60,
            "lab-health to stop",
        )
        stop_jupyter(jupyter)


def running(job: dict) -> bool:
    return job["status"] == "RUNNING" and bool(job["metrics"].get("batches"))


def get_as(url: str, user: str) -> requests.Response:
    return requests.get(url, headers={"Authorization": f"token {TOKENS[user]}"}, timeout=30)


def lab_spec() -> str:
    import yaml
    from healthkit import SPEC

    return yaml.safe_dump({"name": "lab-health", **SPEC})


def test_output_series_of_a_real_spark_job_from_its_influxdb_sink(
    tmp_path_factory, kafka_broker, influxdb_v1, chromium
):
    """A surge job (real runner, Spark) on the session broker writing InfluxDB 1.x: the
    page reads the sink back with the seed system's query and charts each field."""
    served = start_serve(write_state(tmp_path_factory.mktemp("influx-health")))
    try:
        bootstrap = kafka_broker.bootstrap
        topic = new_topic(bootstrap, "health-influx")
        start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=11)
        publish_events(bootstrap, topic, 2400, start=start, rate_per_s=5.0)  # 8 minutes
        sink = influx_v1_sink(influxdb_v1)
        tmp = tmp_path_factory.mktemp("influx-health-job")
        spec = surge_spec(bootstrap, topic, tmp, [sink], name="surge-health").to_yaml()
        body = {"name": "surge-health", "team": "pricing", "spec_yaml": spec}
        assert served.call("POST", "jobs", "alice", body).status_code == 201

        def written() -> int:
            return len(influx_v1_rows(influxdb_v1, sink, mid_write=True))

        wait_for(lambda: written() >= 20, 300, "surge rows")
        page = recorded_page(chromium, headers=headers("alice"))
        page.goto(page_url(served, "surge-health"))
        body_text = page.locator("body").inner_text()
        assert 'SELECT sum(*) FROM "surge" WHERE time > now() - 900s GROUP BY time(30s)' in (
            body_text
        )
        for field in ("bookings", "unique_customers"):
            drawn = chart(page, f"sum({field}) per 30 s")
            assert drawn.locator("circle.point").count() >= 4, field
            assert drawn.locator("path.line").count() == 1, field
        page.screenshot(path=str(SCREENSHOTS / "health-page-influx.png"), full_page=True)
        assert page.problems == []
        assert all(url.startswith(served.url.rstrip("/")) for url in page.requests)
        page.close()
    finally:
        assert served.stop() == 0
