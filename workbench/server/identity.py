"""Who is calling the job service: a request becomes a :class:`Caller` (user name, and
whether the caller is the service's owner, an admin whatever the teams file says).

Identity is pluggable: the handlers take any function ``request handler -> Caller | None``.
``workbench serve`` uses :class:`TokenIdentity` (``Authorization: token T`` or
``Bearer T`` looked up in the service config's tokens, plus the owner's local token, or
for a browser's reads the login cookie a token once presented set); the Jupyter server
extension asks Jupyter (:mod:`workbench.server.extension`).
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
import hmac
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: File in the state folder holding the owner's token (mode 0600).
LOCAL_TOKEN_FILE = "local-token"
#: File in the state folder holding the key that signs login cookies (mode 0600).
COOKIE_SECRET_FILE = "cookie-secret"
#: The browser's login cookie: a token's digest, signed; good for reads (GET, HEAD) only,
#: so a page of another site cannot act with it.
LOGIN_COOKIE = "workbench-login"
COOKIE_DAYS = 7
SAFE_METHODS = ("GET", "HEAD")


@dataclass(frozen=True)
class Caller:
    """An authenticated caller. ``owner``: the user who runs the service (holder of the
    local token, or the single user of a plain Jupyter server): an admin."""

    user: str
    owner: bool = False


#: request handler -> the caller, or None when the request carries no valid identity.
Identify = Callable[[Any], "Caller | None"]


def local_user() -> str:
    """The operating-system user running this process."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        return f"uid{os.getuid()}"


def local_token(state_dir: Path) -> Path:
    """The owner's token file in ``state_dir``, created (random, mode 0600) if missing."""
    return secret_file(Path(state_dir) / LOCAL_TOKEN_FILE)


def secret_file(path: Path) -> Path:
    """``path``, created holding a random secret (mode 0600) if missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    return path


def read_token(path: Path) -> str:
    return Path(path).read_text(encoding="utf-8").strip()


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: token T`` or ``Bearer T`` header."""
    scheme, _, value = (header or "").strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return value.strip()
    return None


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenIdentity:
    """``Authorization`` header (or a read's login cookie) -> :class:`Caller` from a
    ``{token: user}`` table; the owner's token (``owner_token``) names :func:`local_user`
    as an owner."""

    def __init__(self, tokens: Mapping[str, str], owner_token: str | None = None):
        self.tokens = dict(tokens)
        self.owner_token = owner_token

    def __call__(self, handler: Any) -> Caller | None:
        token = bearer(handler.request.headers.get("Authorization"))
        if token is not None:
            return self.caller_of(token)
        if handler.request.method in SAFE_METHODS:
            return self.caller_of_cookie(handler)
        return None

    def caller_of(self, token: str) -> Caller | None:
        if self.owner_token and hmac.compare_digest(token, self.owner_token):
            return Caller(local_user(), owner=True)
        for known, user in self.tokens.items():
            if hmac.compare_digest(token, known):
                return Caller(str(user))
        return None

    def caller_of_cookie(self, handler: Any) -> Caller | None:
        value = handler.get_signed_cookie(LOGIN_COOKIE, max_age_days=COOKIE_DAYS)
        if not value:
            return None
        for token in ([self.owner_token] if self.owner_token else []) + list(self.tokens):
            if hmac.compare_digest(value.decode("ascii", "replace"), digest(token)):
                return self.caller_of(token)
        return None  # a token since removed from the config

    @staticmethod
    def log_in(handler: Any, token: str) -> None:
        """Set the login cookie for ``token`` (a valid one) on ``handler``'s answer."""
        handler.set_signed_cookie(
            LOGIN_COOKIE,
            digest(token),
            expires_days=COOKIE_DAYS,
            httponly=True,
            samesite="Strict",
            secure=handler.request.protocol == "https",
            path=handler.settings.get("base_url", "/"),
        )


def principal(service: Any, caller: Caller) -> Any:
    """The service's Principal for ``caller``; the owner is an admin."""
    who = service.principal(caller.user)
    if caller.owner and not who.admin:
        who = dataclasses.replace(who, admin=True)
    return who
