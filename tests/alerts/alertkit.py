"""Helpers for the alerting tests: specs with alert rules for the stand-in job program, and
a job service with quick timings (tick, heartbeat, retries, health window)."""

from __future__ import annotations

from pathlib import Path

from jobkit import make_config, spec_yaml, teams_file

from workbench.service.job_service import JobService

#: quick supervision, delivery and health measurement
FAST = {
    "tick_s": 0.1,
    "heartbeat_s": 0.25,
    "policy": {"backoff_s": 0.2, "backoff_max_s": 0.5, "max_failures": 2, "stop_grace_s": 3},
    "alerting": {"retry_s": 0.5, "retry_max_s": 1.0, "dispatch_s": 0.1, "health_window_s": 1},
}


def rule(name: str = "hot", notify: tuple[str, ...] = ("hook",), **keys) -> dict:
    """A metric rule (``when``) unless ``health`` is given; delivered at once."""
    data = {"name": name, "group_wait": "0s", "notify": list(notify), **keys}
    if "health" not in keys:
        data.setdefault("when", "amount > 300")
        data.setdefault("group_by", ["service_area_id"])
        data.setdefault("time", "event_timestamp")
        data.setdefault("summary", "cell {service_area_id}: {value}")
    return data


def alert_spec(name: str, description: str, rules: list[dict], hooks: dict[str, str]) -> str:
    """A spec whose stand-in runner behaves as ``description``, with ``rules`` and a
    webhook notifier per ``hooks`` item (name: URL)."""
    notifiers = {n: {"type": "webhook", "url": url} for n, url in hooks.items()}
    return spec_yaml(name, description=description, alerts=rules, notifiers=notifiers)


def submit(service: JobService, name: str, description: str, rules: list[dict], hooks: dict):
    """Submit the job ``name`` (team pricing, as root) with ``rules`` and ``hooks``."""
    spec = alert_spec(name, description, rules, hooks)
    return service.submit(service.principal("root"), name=name, team="pricing", spec_yaml=spec)


def make_alert_service(state: Path, database_url: str, **extra) -> JobService:
    state.mkdir(parents=True, exist_ok=True)
    teams = teams_file(state.parent)
    service = JobService(make_config(state, database_url, teams, **extra))
    service.start_supervisor()
    return service


def statuses(requests) -> list[str]:
    """The ``status`` of each webhook request received, in order."""
    return [r.json["status"] for r in requests]
