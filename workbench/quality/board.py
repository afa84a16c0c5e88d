"""The job service's view of data quality: the quality jobs a user may see, per topic.

:func:`quality_jobs` finds the jobs whose current version is a ``kind: quality`` spec;
:func:`overview` gives each measured topic's latest window; :func:`topic_rows` a topic's
windows over the last hours (read from each job's ``metrics.jsonl``,
:mod:`workbench.quality.history`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from workbench.exceptions import QualityTopicNotFoundError
from workbench.quality import history
from workbench.yamlsafe import load_text


@dataclass(frozen=True)
class QualityJobView:
    job: str
    team: str
    status: str
    checkpoint: str


def quality_jobs(service: Any, who: Any) -> list[QualityJobView]:
    from workbench.jobs import versioning

    found = []
    with service.db.session() as s:
        for job, current in versioning.visible_current(s, who):
            data = load_text(current.spec_yaml) or {}
            if isinstance(data, dict) and data.get("kind") == "quality":
                found.append(QualityJobView(job.name, job.team, job.status, current.checkpoint))
    return found


def overview(service: Any, who: Any) -> list[dict[str, Any]]:
    """Per measured topic: the job and its latest window's row."""
    topics = []
    for view in quality_jobs(service, who):
        rows = history.read(view.checkpoint)
        last: dict[str, dict[str, Any]] = {}
        for row in rows:
            last[row["tag_topic"]] = row
        for topic, row in sorted(last.items()):
            topics.append({"topic": topic, "job": view.job, "team": view.team, "latest": row})
    return topics


def topic_rows(service: Any, who: Any, topic: str, hours: float = 24) -> dict[str, Any]:
    """A topic's windows of the last ``hours`` (404 when no visible quality job has it)."""
    since = int((time.time() - hours * 3600) * 1000)
    jobs, rows, known = [], [], set()
    for view in quality_jobs(service, who):
        mine = history.read(view.checkpoint)
        known |= {r["tag_topic"] for r in mine}
        of_topic = [r for r in mine if r["tag_topic"] == topic]
        if of_topic:
            jobs.append({"job": view.job, "team": view.team, "status": view.status})
            rows += [r for r in of_topic if r["window_timestamp"] >= since]
    if not jobs:
        raise QualityTopicNotFoundError(topic, sorted(known))
    rows.sort(key=lambda r: r["window_timestamp"])
    return {"topic": topic, "jobs": jobs, "hours": hours, "rows": rows}
