"""``GET /workbench/metrics``: Prometheus' text format 0.0.4, read back with
prometheus_client's own parser; authenticated like the API, each caller seeing the jobs
it may see."""

from __future__ import annotations

import pytest
import requests
from healthkit import fake_serve, submit, wait_batches
from prometheus_client.parser import text_string_to_metric_families
from servekit import TOKENS

from workbench.server.prometheus import STATUSES, exposition

pytestmark = pytest.mark.unit

TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def samples(family) -> dict:
    """{(job, team[, status]): value} of a family."""
    return {
        tuple(s.labels[k] for k in ("job", "team", "status") if k in s.labels): s.value
        for s in family.samples
    }


def test_exposition_escapes_labels_and_leaves_out_what_a_job_lacks():
    odd = 'tea"m\\with\nline'
    jobs = [
        {
            "name": "surge",
            "team": odd,
            "status": "LAGGING",
            "version": 3,
            "failures": 0,
            "metrics": {
                "input_rate": 12.5,
                "batches": 4,
                "watermark": "2026-11-24T10:00:00.000Z",
                "last_batch_at": "2026-11-24T10:00:42.500Z",
                "offsets_behind_latest": 250_000,
            },
        },
        {"name": "idle", "team": "supply", "status": "STOPPED", "version": 1, "failures": 2,
         "metrics": {"input_rate": None}},
    ]  # fmt: skip
    text = exposition(jobs)
    found = families(text)
    assert all(f.type == "gauge" and f.documentation for f in found.values())
    rate = samples(found["workbench_job_input_rate"])
    assert rate == {("surge", odd): 12.5}  # None is left out, the label round-trips
    assert samples(found["workbench_job_watermark_delay_seconds"]) == {("surge", odd): 42.5}
    assert samples(found["workbench_job_offsets_behind_latest"]) == {("surge", odd): 250000}
    assert samples(found["workbench_job_failures"]) == {("surge", odd): 0, ("idle", "supply"): 2}
    status = samples(found["workbench_job_status"])
    assert len(status) == 2 * len(STATUSES)
    assert {k for k, v in status.items() if v == 1} == {
        ("surge", odd, "LAGGING"), ("idle", "supply", "STOPPED")
    }  # fmt: skip
    assert "workbench_job_alerts_firing" not in found  # this service keeps no alerts
    assert 'team="tea\\"m\\\\with\\nline"' in text  # escaped as the format says


def test_no_jobs_is_still_valid():
    assert list(families(exposition([]))) == ["workbench_job_status"]


@pytest.fixture(scope="module")
def metrics_served(tmp_path_factory):
    served = fake_serve(tmp_path_factory.mktemp("metrics"))
    submit(served, "alice", "pricey", "pricing", description="lag:1234")
    submit(served, "bob", "supplies", "supply")
    wait_batches(served, "pricey", 3)
    wait_batches(served, "supplies", 3)
    yield served
    assert served.stop() == 0


def scrape(served, authorization: str | None) -> requests.Response:
    headers = {"Authorization": authorization} if authorization else {}
    return requests.get(f"{served.url.rstrip('/')}/workbench/metrics", headers=headers, timeout=30)


@pytest.mark.e2e
def test_admin_scrapes_every_job(metrics_served):
    answer = scrape(metrics_served, f"Bearer {TOKENS['root']}")  # Prometheus' default type
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == TEXT_FORMAT
    found = families(answer.text)
    rates = samples(found["workbench_job_input_rate"])
    assert set(rates) == {("pricey", "pricing"), ("supplies", "supply")}
    assert all(v > 0 for v in rates.values())
    behind = samples(found["workbench_job_offsets_behind_latest"])
    assert behind[("pricey", "pricing")] == 1234 and behind[("supplies", "supply")] == 0
    status = samples(found["workbench_job_status"])
    assert status[("pricey", "pricing", "RUNNING")] == 1
    assert status[("pricey", "pricing", "FAILED")] == 0
    assert samples(found["workbench_job_batches"])[("pricey", "pricing")] >= 3
    assert samples(found["workbench_job_last_batch_timestamp_seconds"])[("pricey", "pricing")] > 0


@pytest.mark.e2e
def test_a_team_token_scrapes_its_teams_jobs(metrics_served):
    for user, job, team in (("alice", "pricey", "pricing"), ("bob", "supplies", "supply")):
        answer = scrape(metrics_served, f"token {TOKENS[user]}")
        assert answer.status_code == 200, answer.text
        status = samples(families(answer.text)["workbench_job_status"])
        assert {key[:2] for key in status} == {(job, team)}


@pytest.mark.e2e
@pytest.mark.parametrize("authorization", [None, "token wrong", "Basic cm9vdDpyb290"])
def test_a_scrape_without_a_valid_token_is_refused(metrics_served, authorization):
    answer = scrape(metrics_served, authorization)
    assert answer.status_code == 401
    assert answer.headers["Content-Type"].startswith("text/plain")
    assert "Authorization: token T" in answer.text and "workbench_job" not in answer.text
