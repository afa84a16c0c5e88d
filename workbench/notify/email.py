"""Email notifier: one message per notification over SMTP (``smtplib``).

The subject is Alertmanager's (``[FIRING:2] hot-cell surge``); the body has a plain-text
part and an HTML part listing each alert (summary, status, labels, value, since when,
a link to the job). ``starttls: true`` upgrades the connection and checks the server's
certificate against the system's trusted ones (``SSL_CERT_FILE`` adds one); ``username``
logs in with ``password``, which must be a secret reference.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from html import escape
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from workbench.exceptions import NotifyError, clip
from workbench.notify.http import ANSWER_CHARS, reason
from workbench.notify.notification import Alert, Notification, rfc3339
from workbench.notify.registry import NOTIFIERS, NotifierConfig


class EmailConfig(NotifierConfig):
    model_config = ConfigDict(
        validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )
    secret_fields: ClassVar[tuple[str, ...]] = ("password",)
    reference_fields: ClassVar[tuple[str, ...]] = ("password",)

    type: Literal["email"] = "email"
    to: list[str] = Field(min_length=1)
    sender: str = Field(alias="from")
    smtp_host: str
    smtp_port: int = 25
    username: str | None = None
    password: str | None = None  # "${env:SMTP_PASSWORD}"
    starttls: bool = False

    def target(self) -> str:
        return f"smtp://{self.smtp_host}:{self.smtp_port}"

    def send(self, note: Notification, timeout_s: float) -> None:
        try:
            with smtplib.SMTP(self.smtp_host, self.smtp_port, timeout=timeout_s) as smtp:
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if self.username:
                    smtp.login(self.username, self.password or "")
                smtp.send_message(message(note, self.sender, self.to))
        except (smtplib.SMTPException, OSError) as err:
            raise _refused(note.receiver, err) from None


def message(note: Notification, sender: str, to: list[str]) -> EmailMessage:
    """The email of ``note``: subject, plain text and HTML alternatives."""
    mail = EmailMessage()
    mail["Subject"] = note.title
    mail["From"] = sender
    mail["To"] = ", ".join(to)
    mail["Date"] = formatdate(localtime=False)
    mail["Message-ID"] = make_msgid(domain="workbench")
    mail.set_content(_text(note))
    mail.add_alternative(_html(note), subtype="html")
    return mail


def _facts(note: Notification, alert: Alert) -> list[tuple[str, str]]:
    labels = ", ".join(f"{k}={v}" for k, v in note.labels_of(alert).items())
    since = rfc3339(alert.starts_at) + (f" to {rfc3339(alert.ends_at)}" if alert.ends_at else "")
    facts = [("status", alert.status), ("severity", alert.severity), ("labels", labels)]
    facts += [("value", alert.value_text), ("since", since), ("job", alert.generator_url)]
    description = str(alert.annotations.get("description") or "")
    return facts + ([("description", description)] if description else [])


def _text(note: Notification) -> str:
    lines = [note.title, ""]
    for alert in note.alerts:
        lines.append(alert.summary)
        lines += [f"  {name}: {value}" for name, value in _facts(note, alert)]
        lines.append("")
    if note.external_url:
        lines.append(f"All alerts: {note.external_url}")
    return "\n".join(lines) + "\n"


def _html(note: Notification) -> str:
    parts = [f"<h2>{escape(note.title)}</h2>"]
    for alert in note.alerts:
        rows = "".join(
            f"<tr><th align='left'>{escape(name)}</th><td>{_cell(name, value)}</td></tr>"
            for name, value in _facts(note, alert)
        )
        parts.append(f"<h3>{escape(alert.summary)}</h3><table>{rows}</table>")
    if note.external_url:
        link = escape(note.external_url, quote=True)
        parts.append(f"<p><a href='{link}'>All alerts</a></p>")
    return f"<html><body>{''.join(parts)}</body></html>\n"


def _cell(name: str, value: str) -> str:
    if name == "job" and value:
        return f"<a href='{escape(value, quote=True)}'>{escape(value)}</a>"
    return escape(value)


def _refused(receiver: str, err: smtplib.SMTPException | OSError) -> NotifyError:
    """What went wrong talking to the SMTP server, and what to check."""
    if isinstance(err, smtplib.SMTPRecipientsRefused):
        code, said = next(iter(err.recipients.values()))
        return _answered(receiver, code, said, "a recipient was refused: check 'to'")
    if isinstance(err, smtplib.SMTPSenderRefused):
        return _answered(receiver, err.smtp_code, err.smtp_error, "check 'from'")
    if isinstance(err, smtplib.SMTPAuthenticationError):
        check = "check 'username' and the secret behind 'password'"
        return _answered(receiver, err.smtp_code, err.smtp_error, check)
    if isinstance(err, smtplib.SMTPResponseException):
        return _answered(receiver, err.smtp_code, err.smtp_error, "check the SMTP server's log")
    if isinstance(err, smtplib.SMTPNotSupportedError):
        problem = f"the server does not support it ({err}): check 'starttls' and 'username'"
        return NotifyError(receiver, "email", problem, retryable=False)
    if isinstance(err, ssl.SSLError):
        problem = (
            f"TLS failed ({getattr(err, 'verify_message', None) or err.reason}): check that "
            "the server's certificate is trusted here (SSL_CERT_FILE) and names smtp_host"
        )
        return NotifyError(receiver, "email", problem, retryable=False)
    return NotifyError(
        receiver,
        "email",
        f"could not talk to the SMTP server ({reason(err)}): check that it is up and "
        "that smtp_host and smtp_port are right; a later attempt may succeed",
    )


def _answered(receiver: str, code: int, said: bytes | str, check: str) -> NotifyError:
    text = said.decode(errors="replace") if isinstance(said, bytes) else str(said)
    text = clip(text.strip(), ANSWER_CHARS)
    return NotifyError(
        receiver,
        "email",
        f"the SMTP server answered {code} {text} ({check})",
        status=code,
        answer=text,
        retryable=400 <= code < 500,
    )


NOTIFIERS.add("email", EmailConfig)
