"""Slack notifier: one Block Kit message per notification to an incoming webhook.

The message has a ``header`` (``[FIRING:2] hot-cell surge``), per alert a ``section``
(its summary, then fields for its labels, value and severity) and a ``context`` line
(status, team, since when), and an ``actions`` block with a button to the job's health
page. ``text`` repeats the header for notifications and clients without blocks. Slack's
limits are kept: at most ``max_alerts`` alerts are listed (the rest counted), 10 fields a
section, texts cut to Slack's lengths. The webhook's URL is its secret: write it as a
reference (``url: "${file:/run/secrets/slack-hook}"``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from workbench.notify.http import post_json
from workbench.notify.notification import FIRING, Alert, Notification, rfc3339
from workbench.notify.registry import NOTIFIERS, NotifierConfig, url_target

HEADER_CHARS, TEXT_CHARS, FIELD_CHARS, FIELDS = 150, 3000, 2000, 10
ICONS = {"firing": ":rotating_light:", "resolved": ":white_check_mark:"}
_SHOWN = ("alertname", "job", "team", "severity")  # in the header and context already
MAX_ALERTS = 23  # header + 2 blocks an alert + "more" + buttons within Slack's 50 blocks


class SlackConfig(NotifierConfig):
    secret_fields: ClassVar[tuple[str, ...]] = ("url",)

    type: Literal["slack"] = "slack"
    url: str  # the incoming webhook's URL (https://hooks.slack.com/services/...)
    max_alerts: int = Field(10, ge=1, le=MAX_ALERTS)  # listed in one message; the rest counted

    def target(self) -> str:
        return url_target(self.url, path=False)

    def send(self, note: Notification, timeout_s: float) -> None:
        post_json(note.receiver, self.type, self.url, message(note, self.max_alerts), timeout_s)


def message(note: Notification, max_alerts: int = MAX_ALERTS) -> dict[str, Any]:
    """The incoming-webhook payload of ``note``: ``text`` and ``blocks``."""
    shown = note.alerts[:max_alerts]
    icon = ICONS[FIRING if note.firing else "resolved"]
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _plain(note.title, HEADER_CHARS)},
    ]
    for alert in shown:
        blocks += [_section(note, alert), _context(alert)]
    if len(note.alerts) > len(shown):
        more = f"... and {len(note.alerts) - len(shown)} more alerts"
        blocks.append({"type": "context", "elements": [_mrkdwn(more)]})
    buttons = _buttons(note)
    if buttons:
        blocks.append({"type": "actions", "elements": buttons})
    return {"text": f"{icon} {note.title}", "blocks": blocks}


def _section(note: Notification, alert: Alert) -> dict[str, Any]:
    labels = {k: v for k, v in note.labels_of(alert).items() if k not in _SHOWN}
    pairs = [*list(labels.items())[: FIELDS - 2], ("value", alert.value_text)]
    fields = [f"*{_escape(k)}*\n{_escape(v)}" for k, v in [*pairs, ("severity", alert.severity)]]
    text = f"{ICONS[alert.status]} *{_escape(alert.summary)}*"
    description = alert.annotations.get("description")
    if description:
        text += f"\n{_escape(str(description))}"
    return {
        "type": "section",
        "text": _mrkdwn(text),
        "fields": [_mrkdwn(f, FIELD_CHARS) for f in fields],
    }


def _context(alert: Alert) -> dict[str, Any]:
    since = f"since {rfc3339(alert.starts_at)}"
    if alert.ends_at:
        since += f", resolved {rfc3339(alert.ends_at)}"
    line = f"{alert.status} · rule `{alert.rule}` · job `{alert.job}` · team {alert.team} · {since}"
    return {"type": "context", "elements": [_mrkdwn(line)]}


def _buttons(note: Notification) -> list[dict[str, Any]]:
    jobs = {a.generator_url: a.job for a in note.alerts if a.generator_url}
    buttons = [
        _button("Open job" if len(jobs) == 1 else f"Open job {job}", url, f"job-{i}")
        for i, (url, job) in enumerate(jobs.items())
    ]
    if note.external_url:
        buttons.append(_button("All alerts", note.external_url, "all-alerts"))
    return buttons[:25]


def _button(text: str, url: str, action_id: str) -> dict[str, Any]:
    return {"type": "button", "text": _plain(text, 75), "url": url, "action_id": action_id}


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": _cut(text, limit), "emoji": True}


def _mrkdwn(text: str, limit: int = TEXT_CHARS) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": _cut(text, limit)}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape(text: str) -> str:
    """Slack's three control characters in mrkdwn text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


NOTIFIERS.add("slack", SlackConfig)
