"""The test receivers themselves: they record, fail on demand, go down and come back."""

from __future__ import annotations

import time

import pytest
import requests

pytestmark = pytest.mark.unit


def test_the_http_receiver_records_method_path_headers_and_json(http_receiver):
    hook = http_receiver.endpoint("probe")
    answer = requests.post(hook.url, json={"a": 1}, headers={"X-Probe": "yes"}, timeout=5)
    assert (answer.status_code, answer.text) == (200, "ok")
    (got,) = hook.wait_for(1)
    assert (got.method, got.path, got.json) == ("POST", hook.path, {"a": 1})
    assert got.headers["x-probe"] == "yes"
    assert http_receiver.endpoint("probe").delivered() == []  # a fresh path each time


def test_it_fails_for_a_while_then_accepts(http_receiver):
    hook = http_receiver.endpoint("probe").fail(503, seconds=0.5)
    assert requests.post(hook.url, json={}, timeout=5).status_code == 503
    time.sleep(0.6)
    assert requests.post(hook.url, json={}, timeout=5).status_code == 200
    assert [r.status for r in hook.attempts()] == [503, 200]
    assert len(hook.delivered()) == 1


def test_it_goes_down_and_comes_back_on_the_same_port(http_receiver):
    hook = http_receiver.endpoint("probe")
    port = http_receiver.port
    http_receiver.down(0.5)
    with pytest.raises(requests.ConnectionError):
        requests.post(hook.url, json={}, timeout=5)
    time.sleep(1.0)
    assert http_receiver.is_up and http_receiver.port == port
    assert requests.post(hook.url, json={}, timeout=5).status_code == 200


def test_the_smtp_receiver_records_messages(smtp_receiver):
    import smtplib
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "wb@x", "probe@x", "hello"
    message.set_content("body")
    with smtplib.SMTP("127.0.0.1", smtp_receiver.port, timeout=5) as smtp:
        smtp.send_message(message)
    (mail,) = smtp_receiver.wait_for(1, to="probe@x")
    assert mail.message["Subject"] == "hello" and mail.mail_from == "wb@x"
    assert mail.login is None and not mail.tls


def test_it_can_come_back_early(http_receiver):
    hook = http_receiver.endpoint("probe")
    http_receiver.down(300)
    assert not http_receiver.is_up
    http_receiver.up()
    assert requests.post(hook.url, json={}, timeout=5).status_code == 200
