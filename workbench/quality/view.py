"""The Voila view of data quality (``notebooks/quality.ipynb``): a quality job's windows
from its checkpoint (``quality/metrics.jsonl``) or its Parquet sink, per topic, as HTML
(:mod:`workbench.quality.charts`). No Spark: Parquet is read with pyarrow. Under Voila the
page's query string sets the notebook's parameters (:func:`from_query`):
``http://127.0.0.1:8866/?source=CHECKPOINT&topic=T&hours=24``.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.charts import STYLE
from workbench.quality import charts, history
from workbench.settings import settings


def rows_from(source: str | Path) -> list[dict[str, Any]]:
    """The latest rows per topic and window of a checkpoint folder or a Parquet sink folder."""
    folder = Path(source)
    if history.path_of(folder).is_file():
        return history.read(folder)
    if not folder.is_dir():
        return []
    import pyarrow.parquet as pq

    table = pq.read_table(str(folder))
    rows = [
        {k: int(v.timestamp() * 1000) if isinstance(v, datetime) else v for k, v in r.items()}
        for r in table.to_pylist()
    ]
    return history.latest(rows)


def from_query(
    source: str, topic: str | None, hours: float | None, query: str | None = None
) -> tuple[str, str | None, float | None]:
    """``source``, ``topic`` and ``hours``, each replaced by the query string's value when it
    has one (``query``: Voila's ``$QUERY_STRING`` when None)."""
    from urllib.parse import parse_qs

    given = parse_qs(settings().query_string if query is None else query)
    hours_given = given.get("hours", [""])[0]
    return (
        given.get("source", [source])[0],
        given.get("topic", [topic])[0],
        float(hours_given) if hours_given else hours,
    )


def quality_html(source: str | Path, topic: str | None = None, hours: float | None = None) -> str:
    """Each topic's (or ``topic``'s) windows of the last ``hours`` (all if None) as HTML."""
    since = 0 if hours is None else int((time.time() - hours * 3600) * 1000)
    rows = [r for r in rows_from(source) if r["window_timestamp"] >= since]
    topics = sorted({r["tag_topic"] for r in rows if topic in (None, r["tag_topic"])})
    if not topics:
        return f"<p>No quality windows in {source}{f' for topic {topic}' if topic else ''}.</p>"

    parts = [charts.topic_html(t, [r for r in rows if r["tag_topic"] == t]) for t in topics]
    return f"<style>{STYLE}</style>" + "".join(parts)
