"""Data quality in the job service: ``GET quality`` (every measured topic the caller may
see, with its latest window: ``{"topics": [{topic, job, team, latest}]}``), ``GET
quality/{topic}[?hours=H]`` (the topic's windows of the last ``H`` hours, 24 by default:
``{topic, jobs, hours, rows}``; 404 when no visible quality job measures it); the HTML page
is :mod:`workbench.server.quality_page`.
"""

from __future__ import annotations

from urllib.parse import unquote

from workbench.quality.board import overview, topic_rows
from workbench.server.api import ApiError, ApiHandler


def hours_of(handler: ApiHandler) -> float:
    """The ``hours`` query argument (24 when absent); 400 unless a positive number."""
    text = handler.get_query_argument("hours", "24")
    try:
        hours = float(text)
    except ValueError:
        hours = -1.0
    if not hours > 0:
        raise ApiError(400, "BadRequest", f"hours must be a positive number, got '{text}'")
    return hours


class QualityRoute(ApiHandler):
    async def get(self) -> None:
        self.reply({"topics": await self.run(lambda who: overview(self.service, who))})


class QualityTopicRoute(ApiHandler):
    async def get(self, topic: str) -> None:
        hours = hours_of(self)
        self.reply(await self.run(lambda who: topic_rows(self.service, who, unquote(topic), hours)))


ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("quality", QualityRoute),
    ("quality/([^/]+)", QualityTopicRoute),
]
