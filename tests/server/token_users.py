"""A Jupyter identity provider for the extension's tests: each API token names a user, as
JupyterHub's does for a Hub user (``c.TokenUsers.users = {token: name}``)."""

from __future__ import annotations

from jupyter_server.auth.identity import IdentityProvider, User
from traitlets import Dict


class TokenUsers(IdentityProvider):
    users = Dict(config=True, help="{token: user name}")

    def get_user(self, handler):
        name = self.users.get(self.get_token(handler) or "")
        if name is None:
            return None
        handler._token_authenticated = True  # no XSRF check for token requests, as Jupyter
        return User(name)
