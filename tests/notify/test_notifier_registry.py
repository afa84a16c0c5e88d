"""The notifier registry: types by name, secrets resolved only at send time, never shown."""

from __future__ import annotations

import pytest
from notekit import alert, note, problems
from pydantic import ValidationError

from workbench.exceptions import NotifyError, UnknownNameError
from workbench.notify.registry import NOTIFIERS, Notification, NotifierConfig, deliver

pytestmark = pytest.mark.unit

SECRET_PATH = "/s3cr3t-T000/B000/XXXX"


def test_builtin_types_are_registered_and_unknown_ones_are_named():
    assert "webhook" in NOTIFIERS.names()
    assert NOTIFIERS.get("webhook").model_fields["type"].default == "webhook"
    with pytest.raises(UnknownNameError) as err:
        NOTIFIERS.config({"type": "webhok", "url": "http://x"})
    assert "Did you mean webhook?" in str(err.value)


def test_unknown_keys_and_bad_references_are_errors():
    with pytest.raises(ValidationError, match="send_resolve"):
        NOTIFIERS.config({"type": "webhook", "url": "http://x", "send_resolve": False})
    with pytest.raises(ValidationError) as err:
        NOTIFIERS.config({"type": "webhook", "url": "${vault:x}"})
    assert problems(err.value) == {
        "url": "Value error, secret ${vault:x}: write ${env:NAME} or ${file:/absolute/path}"
    }


def test_a_reference_is_resolved_only_when_sending(http_receiver, monkeypatch):
    hook = http_receiver.endpoint("secret")
    config = NOTIFIERS.config({"type": "webhook", "url": "${env:WB_TEST_HOOK}"})
    assert config.url == "${env:WB_TEST_HOOK}"  # kept as written
    with pytest.raises(NotifyError) as err:
        deliver(config, note())
    assert "secret ${env:WB_TEST_HOOK}: environment variable WB_TEST_HOOK is not set" in str(
        err.value
    )
    assert not err.value.retryable
    monkeypatch.setenv("WB_TEST_HOOK", hook.url)
    deliver(config, note())
    assert len(hook.wait_for(1)) == 1
    assert config.url == "${env:WB_TEST_HOOK}"


def test_a_secret_never_shows_in_an_error(http_receiver, monkeypatch):
    hook = http_receiver.endpoint("secret")
    secret_url = hook.url + SECRET_PATH
    monkeypatch.setenv("WB_TEST_HOOK", secret_url)
    # a receiver that echoes the secret part of its URL in its answer
    echo = hook.receiver.rule(hook.path + SECRET_PATH)
    echo.status, echo.body = 403, f"bad token in {hook.path + SECRET_PATH}"
    config = NOTIFIERS.config({"type": "webhook", "url": "${env:WB_TEST_HOOK}"})
    with pytest.raises(NotifyError) as err:
        deliver(config, note())
    assert err.value.status == 403
    text = f"{err.value} {err.value.answer} {err.value!r}"
    assert "s3cr3t" not in text
    assert "at ${env:WB_TEST_HOOK}" in str(err.value)
    assert "bad token in ***" in err.value.answer


def test_secret_fields_are_masked_in_repr():
    class Tokened(NotifierConfig):
        secret_fields = ("token", "other")
        reference_fields = ("other",)
        type: str = "tokened"
        token: str
        other: str = ""

    literal = Tokened(token="s3cr3t")
    assert "s3cr3t" not in repr(literal) and "s3cr3t" not in str(literal)
    assert "token='***'" in repr(literal)
    referenced = Tokened(token="${env:TOKEN}", other="${file:/run/secrets/x}")
    assert "token='${env:TOKEN}'" in repr(referenced)
    with pytest.raises(ValidationError) as err:
        Tokened(token="x", other="s3cr3t")
    assert "is a secret: write a reference" in problems(err.value)["other"]
    assert "s3cr3t" not in str(err.value)


def test_notifications_round_trip_through_json():
    import json

    sent = note(alert("1"), alert("2", status="resolved"), test=True)
    again = Notification.from_dict(json.loads(json.dumps(sent.to_dict())))
    assert again == sent
