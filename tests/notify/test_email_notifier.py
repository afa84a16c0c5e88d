"""The email notifier sends Alertmanager's subject with text and HTML parts to a real SMTP
server (aiosmtpd), in plain SMTP, with STARTTLS and with a login."""

from __future__ import annotations

import pytest
from notekit import JOB_URL, alert, note
from pydantic import ValidationError

from workbench.exceptions import NotifyError
from workbench.notify.registry import NOTIFIERS, deliver

pytestmark = pytest.mark.unit


def email(port: int, to: str, **keys):
    data = {"type": "email", "to": [to], "from": "workbench@example.org"}
    data |= {"smtp_host": "127.0.0.1", "smtp_port": port}
    return NOTIFIERS.config(data | keys)


def test_a_firing_group_is_one_mail_with_text_and_html(smtp_receiver):
    to = "oncall-1@example.org"
    deliver(email(smtp_receiver.port, to), note(alert("1234"), alert("5678", bookings=350)))
    (mail,) = smtp_receiver.wait_for(1, to=to)
    message = mail.message
    assert mail.mail_from == "workbench@example.org" and mail.rcpt_tos == [to]
    assert message["Subject"] == "[FIRING:2] hot-cell surge"
    assert message["From"] == "workbench@example.org" and message["To"] == to
    assert message["Date"] and message["Message-ID"]
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    html = message.get_body(("html",)).get_content()
    assert text.startswith("[FIRING:2] hot-cell surge\n\n1234: 412 bookings a minute\n")
    assert "  labels: tag_s2id=1234, alertname=hot-cell, job=surge, team=pricing" in text
    assert "  value: bookings=350" in text
    assert "  since: 2026-11-24T20:01:30.25Z" in text
    assert f"  job: {JOB_URL}" in text
    assert "All alerts: http://127.0.0.1:8888/workbench" in text
    assert "<h2>[FIRING:2] hot-cell surge</h2>" in html
    assert f"<a href='{JOB_URL}'>" in html
    assert mail.login is None and not mail.tls


def test_resolved_subject_and_html_escaping(smtp_receiver):
    to = "oncall-2@example.org"
    annotations = {"summary": "<script>alert(1)</script>"}
    deliver(
        email(smtp_receiver.port, to), note(alert("1", status="resolved", annotations=annotations))
    )
    (mail,) = smtp_receiver.wait_for(1, to=to)
    assert mail.message["Subject"] == "[RESOLVED] hot-cell surge"
    html = mail.message.get_body(("html",)).get_content()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "2026-11-24T20:01:30.25Z to 2026-11-24T20:07:00Z" in html


def test_starttls_and_login(smtp_receiver, monkeypatch):
    to = "oncall-3@example.org"
    monkeypatch.setitem(smtp_receiver.users, "wb", "hunter2-secret")
    monkeypatch.setenv("WB_SMTP_PASSWORD", "hunter2-secret")
    monkeypatch.setenv("SSL_CERT_FILE", str(smtp_receiver.cert_file))
    config = email(
        smtp_receiver.port,
        to,
        starttls=True,
        username="wb",
        password="${env:WB_SMTP_PASSWORD}",
    )
    deliver(config, note())
    (mail,) = smtp_receiver.wait_for(1, to=to)
    assert mail.tls and mail.login == "wb"


def test_a_wrong_password_is_reported_without_it(smtp_receiver, monkeypatch):
    monkeypatch.setitem(smtp_receiver.users, "wb", "right")
    monkeypatch.setenv("WB_SMTP_PASSWORD", "wrong-s3cr3t")
    config = email(
        smtp_receiver.port, "x@example.org", username="wb", password="${env:WB_SMTP_PASSWORD}"
    )
    with pytest.raises(NotifyError) as err:
        deliver(config, note())
    assert err.value.status == 535 and not err.value.retryable
    assert "check 'username' and the secret behind 'password'" in str(err.value)
    assert "s3cr3t" not in f"{err.value} {err.value!r} {config!r}"
    assert str(err.value).startswith(
        f"notifier 'pricing-oncall' (email at smtp://127.0.0.1:{smtp_receiver.port}): "
    )


def test_an_untrusted_certificate_fails_starttls(smtp_receiver, tmp_path, monkeypatch):
    other = tmp_path / "empty.pem"
    other.write_text("")
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    with pytest.raises(NotifyError) as err:
        deliver(email(smtp_receiver.port, "x@example.org", starttls=True), note())
    assert "TLS failed (self-signed certificate)" in str(err.value)
    assert "SSL_CERT_FILE" in str(err.value)


def test_a_server_that_is_not_listening():
    from workbench.dev.ports import free_port

    with pytest.raises(NotifyError) as err:
        deliver(email(free_port(), "x@example.org"), note())
    assert "could not talk to the SMTP server (Connection refused)" in str(err.value)
    assert err.value.retryable


def test_config_keys():
    config = NOTIFIERS.config(
        {"type": "email", "to": ["a@x"], "from": "wb@x", "smtp_host": "h", "password": "${file:/p}"}
    )
    assert config.model_dump()["from"] == "wb@x" and config.smtp_port == 25
    assert NOTIFIERS.config(config.model_dump()) == config
    with pytest.raises(ValidationError, match="password\n  Value error, is a secret"):
        NOTIFIERS.config(
            {"type": "email", "to": ["a@x"], "from": "x", "smtp_host": "h", "password": "pw"}
        )
    with pytest.raises(ValidationError, match="to"):
        NOTIFIERS.config({"type": "email", "to": [], "from": "x", "smtp_host": "h"})
