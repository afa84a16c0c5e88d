"""The servers' request log, with no secret in it: each request logged once with query
parameters that look secret (``token``, ``access_token``, ``password``...) scrubbed, never
a header; and every denial (401, 403, a job hidden as 404) recorded in the audit trail
(:mod:`workbench.service.audit`).

``workbench serve`` sets :func:`log_request` as its tornado ``log_function``; the Jupyter
extension wraps Jupyter's own (which scrubs the same way, given
:data:`SCRUB_WORDS` as ``extra_log_scrub_param_keys``) with :func:`audited`.
:class:`MaskTokens` masks known token values wherever a log line holds one (a token
pasted into a path, an error message).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from workbench.server.identity import LOCAL_TOKEN_FILE
from workbench.service import audit

log = logging.getLogger("workbench.server")
access = logging.getLogger("tornado.access")

#: a query parameter whose name contains one of these is logged as ``[secret]``
SCRUB_WORDS = (
    "token", "auth", "key", "secret", "pass", "sig", "credential", "session", "cookie",
    "code", "state", "xsrf",
)  # fmt: skip
SECRET = "[secret]"
DENIED = (401, 403)

LogFunction = Callable[[Any], None]


def scrub_uri(uri: str) -> str:
    """``uri`` with the value of every secret-looking query parameter replaced."""
    path, sep, query = uri.partition("?")
    if not sep:
        return uri
    parts = []
    for part in query.split("&"):
        key, eq, _value = part.partition("=")
        if any(word in unquote_plus(key).lower() for word in SCRUB_WORDS):
            part = f"{key}={SECRET}"
        parts.append(part)
    return f"{path}?{'&'.join(parts)}"


def log_request(handler: Any) -> None:
    """tornado's access log line (status, method, URI, ip, time), the URI scrubbed."""
    status = handler.get_status()
    level = logging.INFO if status < 400 else logging.WARNING if status < 500 else logging.ERROR
    request = handler.request
    access.log(
        level,
        "%d %s %s (%s) %.2fms",
        status,
        request.method,
        scrub_uri(request.uri),
        request.remote_ip,
        1000.0 * request.request_time(),
    )
    audit_denial(handler)


def audited(base: LogFunction | None) -> LogFunction:
    """``base`` (a server's log_function), then :func:`audit_denial`."""

    def log_and_audit(handler: Any) -> None:
        if base is not None:
            base(handler)
        audit_denial(handler)

    return log_and_audit


def audit_denial(handler: Any) -> None:
    """A 401 or 403 answer, or a hidden job (``handler.denial``), to the audit trail of the
    job service the server holds (``workbench_service`` in its settings)."""
    status = handler.get_status()
    denial = getattr(handler, "denial", None)
    service = handler.settings.get("workbench_service")
    if service is None or (status not in DENIED and not denial):
        return
    request = handler.request
    try:
        masking = MaskTokens(_tokens(service))
        audit.record(
            service.config.state_dir,
            user=_user(handler),
            credential=_credential(request),
            method=request.method,
            path=masking.mask(scrub_uri(request.uri)),
            status=status,
            reason=masking.mask(denial or getattr(handler, "refusal", None) or handler._reason),
            ip=request.remote_ip,
        )
    except OSError as err:
        log.error("cannot write the audit trail: %s", err)


def _tokens(service: Any) -> list[str]:
    """The tokens the service knows (its config's and the owner's): none goes to the trail."""
    owner = Path(service.config.state_dir) / LOCAL_TOKEN_FILE
    try:
        mine = [owner.read_text(encoding="utf-8").strip()]
    except OSError:
        mine = []
    return [*service.config.all_tokens(), *mine]


def _user(handler: Any) -> str | None:
    caller = getattr(handler, "audit_user", None)
    if caller:
        return caller
    try:
        user = handler.current_user
    except Exception:  # a handler whose login failed or never ran
        return None
    return getattr(user, "username", None) or (user if isinstance(user, str) else None)


def _credential(request: Any) -> str:
    """What the request presented to log in (never its value)."""
    if request.headers.get("Authorization"):
        return "authorization header"
    if any(word in key.lower() for key in request.query_arguments for word in ("token", "auth")):
        return "token in the URL"
    if request.headers.get("Cookie"):
        return "cookie"
    return "none"


class MaskTokens(logging.Filter):
    """Masks the given token values in every record that passes (message, arguments and
    traceback): set on a log handler, it guards every logger writing through it."""

    def __init__(self, tokens: Iterable[str]):
        super().__init__()
        self.tokens = sorted({t for t in tokens if t}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        for token in self.tokens:
            text = text.replace(token, SECRET)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.mask(record.exc_text)
        return True


def mask_tokens(tokens: Iterable[str]) -> None:
    """:class:`MaskTokens` on every handler of the root logger."""
    masking = MaskTokens(tokens)
    for handler in logging.getLogger().handlers:
        handler.addFilter(masking)
