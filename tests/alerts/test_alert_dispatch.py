"""Delivery: a receiver that is down gets its notifications once back, in order, while
ingestion and the other receivers go on; silences suppress, then expire."""

from __future__ import annotations

import time

import pytest
from alertkit import rule, statuses, submit
from polling import wait_for
from sqlalchemy import select

from workbench.jobs.alert_tables import OutboxRow

pytestmark = pytest.mark.unit


def test_the_alerts_of_one_rule_go_out_together(alert_service, http_receiver):
    hook = http_receiver.endpoint("dispatch-group")
    service = alert_service()
    rules = [rule(group_wait="1s")]
    submit(service, "hot-cells", "fire:3-5 cells:3", rules, {"hook": hook.url})
    firing, resolved = hook.wait_for(2, timeout=30)
    time.sleep(1.5)
    assert len(hook.delivered()) == 2
    cells = sorted(a["labels"]["service_area_id"] for a in firing.json["alerts"])
    assert cells == ["7", "8", "9"] and firing.json["status"] == "firing"
    assert [a["status"] for a in resolved.json["alerts"]] == ["resolved"] * 3
    assert firing.json["groupKey"] == resolved.json["groupKey"]


def test_a_receiver_down_for_a_while_gets_everything_after(alert_service, http_receiver):
    down, up = http_receiver.endpoint("dispatch-down"), http_receiver.endpoint("dispatch-up")
    down.fail(500, seconds=3600)  # down until the test says so
    service = alert_service()
    submit(service, "hot-down", "fire:3-4", [rule(notify=("down",))], {"down": down.url})
    submit(service, "hot-up", "fire:3-4", [rule(notify=("up",))], {"up": up.url})
    root = service.principal("root")
    up.wait_for(2, timeout=30)  # the other receiver is not held up
    history = wait_for(lambda: len(service.alert_history(root, "hot-down")) == 2 or None, 30,
                       "the failing receiver's alert to resolve (ingestion goes on)")  # fmt: skip
    wait_for(lambda: len(down.attempts()) >= 2 or None, 30, "attempts while it is down")
    assert history and not down.delivered()
    down.recover()
    got = down.wait_for(2, timeout=30)
    assert statuses(got) == ["firing", "resolved"]
    assert [r.json["notification_reason"] for r in got] == [
        "first notification", "all alerts resolved"
    ]  # fmt: skip
    assert len(down.attempts()) > 2


def test_a_slow_receiver_holds_up_only_itself(alert_service, http_receiver):
    slow, fast = http_receiver.endpoint("dispatch-slow"), http_receiver.endpoint("dispatch-fast")
    slow.delay(4)
    service = alert_service()
    hooks = {"slow": slow.url, "fast": fast.url}
    submit(service, "hot-slow", "fire:3-1000", [rule(notify=("slow",))], hooks)
    wait_for(lambda: slow.attempts() or None, 30, "the slow receiver to be called")
    started = time.monotonic()
    submit(service, "hot-fast", "fire:3-1000", [rule(notify=("fast",))], hooks)
    fast.wait_for(1, timeout=30)
    assert time.monotonic() - started < 3.5  # while the slow one still answers
    assert statuses(slow.wait_for(1, timeout=30)) == ["firing"]


def test_a_silence_suppresses_then_expires(alert_service, http_receiver):
    hook = http_receiver.endpoint("dispatch-silence")
    service = alert_service()
    bob = service.principal("bob")
    # long enough to outlast the job's start and first firing in a slow hour (4 s did not)
    silence = service.silence(
        bob, "hot", labels={"service_area_id": "7"}, duration="15s", comment="maintenance"
    )
    assert silence["team"] == "pricing" and silence["author"] == "bob"
    job = submit(service, "hot-silenced", "fire:2-1000", [rule()], {"hook": hook.url})
    root = service.principal("root")
    wait_for(lambda: service.get_job(root, job["id"])["alerts_firing"] == 1, 30, "firing")
    [alert] = service.list_alerts(bob, firing=True)
    assert alert["silenced_by"] == silence["id"]
    time.sleep(1)
    assert hook.delivered() == []
    got = hook.wait_for(1, timeout=40)  # the silence ended: the alert still fires
    assert statuses(got) == ["firing"]
    assert service.list_alerts(bob, firing=True)[0]["silenced_by"] is None


def test_a_silence_of_other_labels_does_not_apply(alert_service, http_receiver):
    hook = http_receiver.endpoint("dispatch-other-labels")
    service = alert_service()
    bob = service.principal("bob")
    service.silence(bob, "hot", labels={"service_area_id": "8"}, duration="1h", comment="x")
    submit(service, "hot-not-silenced", "fire:2-1000", [rule()], {"hook": hook.url})
    assert statuses(hook.wait_for(1, timeout=30)) == ["firing"]


def test_a_firing_alert_is_sent_again_every_repeat_interval(alert_service, http_receiver):
    hook = http_receiver.endpoint("dispatch-repeat")
    service = alert_service()
    submit(service, "hot-repeat", "fire:2-1000", [rule(repeat_interval="2s")], {"hook": hook.url})
    first, again = hook.wait_for(2, timeout=30)
    assert statuses([first, again]) == ["firing", "firing"] and again.at - first.at >= 2
    fingerprints = [[a["fingerprint"] for a in r.json["alerts"]] for r in (first, again)]
    assert fingerprints[0] == fingerprints[1] and len(fingerprints[0]) == 1


def test_a_group_goes_out_whole_with_its_true_status(alert_service, http_receiver):
    """Cells 7, 8 and 9 fire; cell 7 resolves while 8 and 9 fire on: one POST with all
    three, status firing, "some alerts resolved"."""
    hook = http_receiver.endpoint("dispatch-whole")
    service = alert_service()
    submit(service, "hot-whole", "fire:3-100000 cells:3 drop:5", [rule()], {"hook": hook.url})
    first, second = (r.json for r in hook.wait_for(2, timeout=30))
    assert (first["status"], first["notification_reason"]) == ("firing", "first notification")
    assert (second["status"], second["notification_reason"]) == ("firing", "some alerts resolved")
    cells = {a["labels"]["service_area_id"]: a["status"] for a in second["alerts"]}
    assert cells == {"7": "resolved", "8": "firing", "9": "firing"}
    assert first["groupKey"] == second["groupKey"] == "hot-whole/hot"
    for payload in (first, second):
        fingerprints = [a["fingerprint"] for a in payload["alerts"]]
        assert len(fingerprints) == len(set(fingerprints))


def _held(service, job_id: int) -> bool:
    with service.db.session() as s:
        query = select(OutboxRow).where(OutboxRow.job_id == job_id, OutboxRow.kind == "resolved")
        return any(r.status == "pending" and "silence" in (r.last_error or "")
                   for r in s.scalars(query))  # fmt: skip


def test_a_silence_after_a_delivered_firing_holds_its_resolved_until_it_ends(
    alert_service, http_receiver, tmp_path
):
    hook = http_receiver.endpoint("dispatch-held")
    flag = tmp_path / "hot-while"
    flag.touch()
    service = alert_service()
    job = submit(service, "hot-held", f"while:{flag}", [rule()], {"hook": hook.url})
    assert statuses(hook.wait_for(1, timeout=30)) == ["firing"]
    bob, root = service.principal("bob"), service.principal("root")
    silence = service.silence(bob, "hot", labels=None, duration="1h", comment="roadworks")
    flag.unlink()  # the alert resolves while silenced
    wait_for(lambda: _held(service, job["id"]), 30, "the resolved notification held")
    assert [e["status"] for e in service.alert_history(root, "hot-held")] == ["firing", "resolved"]
    assert statuses(hook.delivered()) == ["firing"]
    service.unsilence(bob, silence["id"])
    firing, resolved = hook.wait_for(2, timeout=30)
    assert resolved.json["status"] == "resolved"
    assert resolved.json["notification_reason"] == "all alerts resolved"
    assert resolved.json["alerts"][0]["fingerprint"] == firing.json["alerts"][0]["fingerprint"]


def test_links_go_to_the_configured_public_url(alert_service, http_receiver, tmp_path):
    """A CLI-started service on a random port recorded itself in service.json: links
    still go to the service's configured public URL."""
    hook = http_receiver.endpoint("dispatch-links")
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "service.json").write_text('{"url": "http://127.0.0.1:41234/", "pid": 1}')
    public = "https://workbench.example.com/"
    service = alert_service(external_url=public)
    submit(service, "hot-links", "fire:2-1000", [rule()], {"hook": hook.url})
    [got] = hook.wait_for(1, timeout=30)
    assert got.json["externalURL"] == public
    assert got.json["alerts"][0]["generatorURL"].startswith(public + "workbench/jobs/")


def test_no_public_url_configured_means_no_link_to_a_passing_process(
    alert_service, http_receiver, tmp_path
):
    hook = http_receiver.endpoint("dispatch-no-links")
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "service.json").write_text('{"url": "http://127.0.0.1:41234/", "pid": 1}')
    service = alert_service()
    submit(service, "hot-no-links", "fire:2-1000", [rule()], {"hook": hook.url})
    [got] = hook.wait_for(1, timeout=30)
    assert "41234" not in got.body.decode()
