"""``POST service/reload``: read ``service.yaml`` again (clusters, teams, tokens) without a
restart, as SIGHUP does to ``workbench serve`` (:mod:`workbench.service.reload`). Admins
only; a file that does not load is a 400 naming the key and the old config stays."""

from __future__ import annotations

import logging
from typing import Any

from workbench.server.api import ApiHandler
from workbench.server.identity import TokenIdentity
from workbench.service.reload import summary

log = logging.getLogger("workbench.server")


class ReloadRoute(ApiHandler):
    async def post(self) -> None:
        result = await self.call("reload_config")
        refresh_tokens(self.settings.get("identify"), self.service)
        log.info("%s (asked by the API)", summary(result))
        self.reply(result)


def refresh_tokens(identify: Any, service: Any) -> None:
    """The reloaded API tokens into ``workbench serve``'s token table (a Jupyter server's
    logins are Jupyter's own)."""
    if isinstance(identify, TokenIdentity):
        identify.tokens = dict(service.config.all_tokens())


ROUTES: list[tuple[str, type[ApiHandler]]] = [("service/reload", ReloadRoute)]
