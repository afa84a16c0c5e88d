"""The notifier registry: a notifier type's name maps to its config model, which sends.

A notifier module defines a pydantic config (a :class:`NotifierConfig` with
``type: Literal[name]`` and a :meth:`~NotifierConfig.send`) and calls
``NOTIFIERS.add(name, Config)``. Third-party notifiers register through the
``workbench.notifiers`` entry-point group.

Configs are written in a spec's ``notifiers`` (or the job service's, per team) with
secrets as ``${env:NAME}`` / ``${file:PATH}`` references (:mod:`workbench.secrets`).
A config keeps the references as written; :func:`deliver` resolves them for one send, in
the process that sends, and masks their values in any error. A type's ``secret_fields``
are masked in the config's ``repr`` too, and its ``reference_fields`` must be references
(a PagerDuty routing key, an SMTP password never sit in a spec).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from workbench import secrets
from workbench.exceptions import NotifyError, SecretError
from workbench.notify.notification import Alert, Notification
from workbench.plugins import Plugins

#: the modules registering the built-in notifier types
BUILTIN = tuple(f"workbench.notify.{name}" for name in ("webhook", "slack", "pagerduty", "email"))

__all__ = ["NOTIFIERS", "Alert", "NotifierConfig", "Notification", "deliver"]


class NotifierConfig(BaseModel):
    """Common base: unknown keys are errors; ``send_resolved: false`` drops the resolved
    alerts of a notification (and the notification if nothing is left)."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)
    #: fields whose values are secrets: masked in ``repr`` (unless written as references)
    #: and in errors
    secret_fields: ClassVar[tuple[str, ...]] = ()
    #: secret fields that must be written as references, never as the secret itself
    reference_fields: ClassVar[tuple[str, ...]] = ()

    type: str
    send_resolved: bool = True

    @field_validator("*")
    @classmethod
    def _check_references(cls, value: Any, info: ValidationInfo) -> Any:
        for text in _strings(value):
            try:
                secrets.check(text)
            except SecretError as err:
                raise ValueError(str(err)) from None
        if info.field_name in cls.reference_fields and value and not secrets.references(value):
            raise ValueError(
                "is a secret: write a reference such as ${env:NAME} or "
                "${file:/run/secrets/NAME}, resolved only where notifications are sent"
            )
        return value

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, _masked(value) if name in self.secret_fields else value

    def target(self) -> str:
        """Where this notifier sends, as shown in errors (no secret in it)."""
        return ""

    def send(self, note: Notification, timeout_s: float) -> None:
        """Send ``note`` once (secrets already resolved in this copy); raise
        :class:`NotifyError` if the receiver did not take it."""
        raise NotImplementedError(f"notifier '{self.type}' cannot send")


def url_target(url: str, path: bool = True) -> str:
    """``url`` as shown in errors: references as written, never a query or user info; the
    path only if ``path`` (a Slack webhook's path is its secret)."""
    if secrets.references(url):
        return url.split("?")[0]
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return f"{parts.scheme}://{host}{parts.path if path else '/...'}"


def _strings(value: Any) -> list[str]:
    """The texts in a field's value (a string, or those of a list or a mapping's values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _masked(value: Any) -> Any:
    """A secret field's value for ``repr``: as written if it holds a reference (``Bearer
    ${env:TOKEN}``), else masked."""
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    return value if not value or secrets.references(str(value)) else secrets.MASK


class NotifierRegistry(Plugins[type[NotifierConfig]]):
    """Notifier types by name."""

    def __init__(self) -> None:
        super().__init__("notifier type", BUILTIN, "workbench.notifiers")

    def config(self, data: dict[str, Any]) -> NotifierConfig:
        """``data`` (a spec's ``notifiers`` entry) validated by its type's model; raises
        :class:`UnknownNameError` or pydantic's ``ValidationError``."""
        return self.get(str(data.get("type"))).model_validate(data)


NOTIFIERS = NotifierRegistry()


def deliver(config: NotifierConfig, note: Notification, timeout_s: float = 10) -> None:
    """Send ``note`` through ``config`` once, resolving its secrets for this send only.

    Returns when the receiver took it (or when nothing is left to send: only resolved
    alerts and ``send_resolved: false``); otherwise raises :class:`NotifyError` naming
    the receiver, its status and answer, with every secret masked. No retries here."""
    if not config.send_resolved:
        note = note.only_firing()
    if not note.alerts:
        return
    try:
        resolved, mask = _resolved(config)
    except SecretError as err:
        raise NotifyError(
            note.receiver,
            config.type,
            f"{err}. Nothing was sent: fix the secret where notifications are sent",
            retryable=False,
            where=config.target(),
        ) from None
    try:
        resolved.send(note, timeout_s)
    except NotifyError as err:
        raise NotifyError(
            err.receiver,
            err.kind,
            mask(err.problem),
            err.status,
            mask(err.answer),
            err.retryable,
            config.target(),
        ) from None


def _resolved(config: NotifierConfig) -> tuple[NotifierConfig, Callable[[str], str]]:
    """A copy of ``config`` with its references resolved, and a function masking every
    secret value (resolved references, literal secret fields) in a text."""
    found: dict[str, str] = {}
    values = secrets.resolve(config.model_dump(exclude={"type"}, by_alias=False), found)
    resolved = config.model_copy(update=values)
    literal = [t for name in config.secret_fields for t in _strings(getattr(resolved, name))]
    return resolved, secrets.redact(_parts([*found.values(), *literal]))


def _parts(values: list[str]) -> list[str]:
    """Each secret, and the path and query of a secret URL (a receiver may echo them)."""
    found = []
    for value in values:
        parts = urlsplit(value)
        found += [value, parts.query]
        if parts.scheme and len(parts.path) > 1:
            found.append(parts.path)
    return [v for v in found if v]
