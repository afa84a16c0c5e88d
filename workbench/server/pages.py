"""The service's routes outside the JSON API, under ``{base_url}workbench/``: the health
page of a job (:mod:`workbench.server.health_page`) and the Prometheus endpoint
(:mod:`workbench.server.prometheus`). Both ways of serving mount them with
:func:`page_rules`, as they mount the API with :func:`workbench.server.handlers.rules`."""

from __future__ import annotations

from typing import Any

from workbench.server import health_page, prometheus, quality_page
from workbench.server.handlers import rules

UNDER = "workbench"
ROUTES = [*health_page.ROUTES, *prometheus.ROUTES, *quality_page.ROUTES]


def page_rules(
    base_url: str, base: type, settings: dict, wrap: Any = None
) -> list[tuple[str, type, dict]]:
    """Tornado URL rules of :data:`ROUTES` (see :func:`workbench.server.handlers.rules`)."""
    return rules(base_url, base, settings, wrap, routes=ROUTES, under=UNDER)
