"""``GET {base_url}workbench/quality/{topic}[?hours=H]``: a topic's data quality as an HTML
page like the health page (score, completeness, counts and latencies per window as inline
SVG, the last windows as a table; no script, nothing fetched; a browser logs in once;
reloads every 30 s). The data is :func:`workbench.quality.board.topic_rows`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from workbench.quality import charts
from workbench.quality.board import topic_rows
from workbench.server.api import ApiHandler
from workbench.server.health_page import CSP, PageRoute, page
from workbench.server.quality_routes import hours_of


class QualityPage(PageRoute):
    async def get(self, topic: str) -> None:
        hours = hours_of(self)
        data = await self.run(lambda who: topic_rows(self.service, who, unquote(topic), hours))
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("Cache-Control", "no-store")
        self.finish(render(data))


ROUTES: list[tuple[str, type[ApiHandler]]] = [("quality/([^/]+)", QualityPage)]


def render(data: dict[str, Any]) -> str:
    jobs = ", ".join(f"{j['job']} ({j['team']}, {j['status']})" for j in data["jobs"])
    return page(f"{data['topic']} quality", charts.topic_html(data["topic"], data["rows"],
                f"{jobs} · last {_hours(data['hours'])} h"), refresh=True)  # fmt: skip


def _hours(hours: float) -> str:
    """``24``, ``1.5``, ``1,000,000``: as a person writes hours."""
    return f"{hours:,.2f}".rstrip("0").rstrip(".")
