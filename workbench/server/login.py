"""Jupyter logins with the job service's tokens: ``ServerApp.identity_provider_class =
workbench.server.login.TokenLogin``.

Each token of the service config (``tokens``/``tokens_file``, the same that ``workbench
serve`` accepts) names a user: sent as ``Authorization: token T``, or pasted into the
login page (which asks for the access token: ``workbench/dashboard/jupyter/templates``),
it logs that user in (a signed cookie keeps the browser logged in; Jupyter also takes
``?token=T`` once, and its request log scrubs it). The job service's teams file then
applies: teams, admins, and dashboard viewers, whom
:func:`workbench.server.authorizer.gate` keeps to the dashboard.
``c.TokenLogin.users = {token: user}`` replaces the service config's tokens.
"""

from __future__ import annotations

import hmac
from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User
from traitlets import Dict, default

from workbench.server.authorizer import gate


class TokenLogin(IdentityProvider):
    users = Dict(
        config=True,
        help="{token: user name}; default: the tokens of the workbench job service's config.",
    )

    @default("token")
    def _no_shared_token(self) -> str:
        return ""  # no anonymous shared token: every token names a user

    def user_for(self, token: str, handler: Any) -> User | None:
        if not token:
            return None
        table = self.users or _service_tokens(handler)
        for known, name in table.items():
            if hmac.compare_digest(str(known), token):
                return User(username=str(name), name=str(name), display_name=str(name))
        return None

    async def get_user_token(self, handler: Any) -> User | None:
        return self.user_for(self.get_token(handler) or "", handler)

    async def get_user(self, handler: Any) -> User | None:  # type: ignore[override]
        user = await self._get_user(handler)
        if user is not None:
            gate(handler, user)
        return user

    def process_login_form(self, handler: Any) -> User | None:
        return self.user_for(handler.get_argument("password", default=""), handler)


def _service_tokens(handler: Any) -> dict[str, str]:
    service = handler.settings.get("workbench_service")
    return service.config.all_tokens() if service is not None else {}
