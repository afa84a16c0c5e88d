"""The Slack notifier posts a Block Kit message (rule, labels, value, job link) to a real
HTTP receiver standing in for Slack's incoming webhook; Slack's block limits hold."""

from __future__ import annotations

from dataclasses import replace

import pytest
from notekit import JOB_URL, alert, note

from workbench.exceptions import NotifyError
from workbench.notify.registry import NOTIFIERS, deliver

pytestmark = pytest.mark.unit

BLOCK_TYPES = {"header", "section", "context", "actions", "divider"}


def slack(url: str, **keys):
    return NOTIFIERS.config({"type": "slack", "url": url, **keys})


def check_block_kit(body: dict) -> None:
    """Slack's documented shape and limits for an incoming webhook's blocks."""
    assert set(body) == {"text", "blocks"} and isinstance(body["text"], str)
    blocks = body["blocks"]
    assert 1 <= len(blocks) <= 50
    action_ids = []
    for block in blocks:
        assert block["type"] in BLOCK_TYPES
        if block["type"] == "header":
            assert block["text"]["type"] == "plain_text"
            assert len(block["text"]["text"]) <= 150
        if block["type"] == "section":
            assert block["text"]["type"] == "mrkdwn" and len(block["text"]["text"]) <= 3000
            assert 1 <= len(block["fields"]) <= 10
            for f in block["fields"]:
                assert f["type"] == "mrkdwn" and len(f["text"]) <= 2000
        if block["type"] == "context":
            assert 1 <= len(block["elements"]) <= 10
            assert all(e["type"] == "mrkdwn" for e in block["elements"])
        if block["type"] == "actions":
            for button in block["elements"]:
                assert button["type"] == "button"
                assert button["text"]["type"] == "plain_text" and len(button["text"]["text"]) <= 75
                assert button["url"].startswith("http")
                action_ids.append(button["action_id"])
    assert len(action_ids) == len(set(action_ids))


def test_a_firing_alert_is_a_block_kit_message(http_receiver):
    hook = http_receiver.endpoint("slack")
    deliver(slack(hook.url), note(alert("1234", bookings=412.0)))
    (request,) = hook.wait_for(1)
    assert request.headers["content-type"] == "application/json"
    body = request.json
    check_block_kit(body)
    assert body["text"] == ":rotating_light: [FIRING:1] hot-cell surge"
    header, section, context, actions = body["blocks"]
    assert header["text"]["text"] == "[FIRING:1] hot-cell surge"
    assert section["text"]["text"] == ":rotating_light: *1234: 412 bookings a minute*"
    fields = [f["text"] for f in section["fields"]]
    assert fields == ["*tag_s2id*\n1234", "*value*\nbookings=412", "*severity*\nwarning"]
    assert "rule `hot-cell`" in context["elements"][0]["text"]
    assert "since 2026-11-24T20:01:30.25Z" in context["elements"][0]["text"]
    job, everything = actions["elements"]
    assert (job["text"]["text"], job["url"]) == ("Open job", JOB_URL)
    assert everything["url"] == "http://127.0.0.1:8888/workbench"


def test_many_alerts_are_listed_up_to_max_alerts_and_counted(http_receiver):
    hook = http_receiver.endpoint("slack")
    deliver(slack(hook.url, max_alerts=3), note(*(alert(str(c)) for c in range(40))))
    body = hook.wait_for(1)[0].json
    check_block_kit(body)
    sections = [b for b in body["blocks"] if b["type"] == "section"]
    assert len(sections) == 3
    assert "... and 37 more alerts" in str(body["blocks"][-2])


def test_a_resolved_test_notification_says_so(http_receiver):
    hook = http_receiver.endpoint("slack")
    annotations = {"summary": "cell 1 is calm", "description": "<b>&"}
    resolved = alert("1", status="resolved", annotations=annotations)
    deliver(slack(hook.url), note(resolved, test=True))
    body = hook.wait_for(1)[0].json
    check_block_kit(body)
    assert body["blocks"][0]["text"]["text"] == "[TEST] [RESOLVED] hot-cell surge"
    section = body["blocks"][1]
    assert section["text"]["text"] == ":white_check_mark: *cell 1 is calm*\n&lt;b&gt;&amp;"
    assert "*test*\ntrue" in [f["text"] for f in section["fields"]]
    assert "resolved 2026-11-24T20:07:00Z" in body["blocks"][2]["elements"][0]["text"]


def test_max_alerts_stays_within_slacks_50_blocks(http_receiver):
    from pydantic import ValidationError

    hook = http_receiver.endpoint("slack")
    with pytest.raises(ValidationError, match="max_alerts"):
        slack(hook.url, max_alerts=24)
    deliver(slack(hook.url, max_alerts=23), note(*(alert(str(c)) for c in range(100))))
    check_block_kit(hook.wait_for(1)[0].json)


def test_without_links_there_are_no_buttons(http_receiver):
    hook = http_receiver.endpoint("slack")
    bare = note(alert("1", generator_url=""))
    deliver(slack(hook.url), replace(bare, external_url=""))
    body = hook.wait_for(1)[0].json
    check_block_kit(body)
    assert [b["type"] for b in body["blocks"]] == ["header", "section", "context"]


def test_long_texts_are_cut_to_slacks_limits(http_receiver):
    hook = http_receiver.endpoint("slack")
    long = alert("x" * 3000, annotations={"summary": "s" * 5000})
    deliver(slack(hook.url), note(long))
    check_block_kit(hook.wait_for(1)[0].json)


def test_the_webhook_url_is_a_secret_kept_out_of_errors(http_receiver, monkeypatch):
    hook = http_receiver.endpoint("slack")
    secret = "/services/T0001/B0001/s3cr3tTOKEN"
    rule = http_receiver.rule(hook.path + secret)
    rule.status, rule.body = 404, "no_service"
    monkeypatch.setenv("WB_SLACK_HOOK", hook.url + secret)
    config = slack("${env:WB_SLACK_HOOK}")
    with pytest.raises(NotifyError) as err:
        deliver(config, note())
    assert err.value.status == 404 and err.value.answer == "no_service"
    assert "s3cr3t" not in f"{err.value} {err.value!r}"
    literal = slack(hook.url + secret)
    assert "s3cr3t" not in repr(literal)
    with pytest.raises(NotifyError) as err:
        deliver(literal, note())
    assert "s3cr3t" not in str(err.value)
    assert f"(slack at http://127.0.0.1:{http_receiver.port}/...)" in str(err.value)
