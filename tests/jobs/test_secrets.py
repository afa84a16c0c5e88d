"""Secret references: found, checked, resolved from the environment and files; errors
name the reference and never the value."""

from __future__ import annotations

import pytest

from workbench import secrets
from workbench.exceptions import SecretError

pytestmark = pytest.mark.unit


def test_references_in_order_and_escaped_ones_skipped():
    text = "a ${env:A} b $${env:NOT} c ${file:/x/y}"
    assert secrets.references(text) == ["${env:A}", "${file:/x/y}"]
    assert secrets.check(text) == ["${env:A}", "${file:/x/y}"]


@pytest.mark.parametrize("bad", ["${vault:x}", "${env:1BAD}", "${file:  }", "${envNAME}"])
def test_check_refuses_malformed_references(bad):
    with pytest.raises(SecretError) as err:
        secrets.check(f"x {bad} y")
    assert bad in str(err.value)


def test_resolve_copies_nested_values(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_TEST_PASSWORD", "hunter2")
    token = tmp_path / "token"
    token.write_text("s3cr3t-token\n")
    spec = {
        "sinks": [{"token": f"${{file:{token}}}"}],
        "opts": {"jaas": 'password="${env:WB_TEST_PASSWORD}";', "n": 3},
        "plain": "$${env:LITERAL}",
    }
    found: dict[str, str] = {}
    out = secrets.resolve(spec, found)
    assert out == {
        "sinks": [{"token": "s3cr3t-token"}],
        "opts": {"jaas": 'password="hunter2";', "n": 3},
        "plain": "${env:LITERAL}",
    }
    assert spec["sinks"][0]["token"] == f"${{file:{token}}}"  # the input is left as it was
    assert sorted(found.values()) == ["hunter2", "s3cr3t-token"]
    mask = secrets.redact(found.values())
    assert mask("auth hunter2 / s3cr3t-token") == "auth *** / ***"


def test_errors_name_the_reference_not_a_value(monkeypatch, tmp_path):
    monkeypatch.delenv("WB_TEST_MISSING", raising=False)
    with pytest.raises(SecretError, match=r"\$\{env:WB_TEST_MISSING\}.*not set"):
        secrets.resolve({"a": "${env:WB_TEST_MISSING}"})
    missing = tmp_path / "nope"
    with pytest.raises(SecretError, match="cannot read") as err:
        secrets.resolve([f"${{file:{missing}}}"])
    assert err.value.reference == f"${{file:{missing}}}"


def test_a_referenced_url_is_checked_after_resolution_not_at_submission():
    from workbench.spec import parse

    sink = {
        "type": "influx",
        "api": 1,
        "url": "${env:INFLUX_URL}",
        "database": "d",
        "measurement": "m",
    }
    data = {"name": "s", "streams": [{"table": "t", "message": "m", "topics": ["x"]}],
            "sql": "SELECT 1 FROM t", "sinks": [sink]}  # fmt: skip
    assert parse(data).sinks[0].url == "${env:INFLUX_URL}"
    with pytest.raises(Exception, match="url"):
        parse({**data, "sinks": [{**sink, "url": "not a url"}]})
