"""Errors no retry mends (workbench.runtime.errors), judged by type through the causes."""

from __future__ import annotations

import pytest

from workbench.exceptions import (
    KafkaUnreachableError,
    SchemaError,
    SecretError,
    SinkError,
    SpecError,
    SqlError,
)
from workbench.runtime.errors import deterministic
from workbench.streaming.job import JobFailedError

pytestmark = pytest.mark.unit


def raised_from(cause: BaseException) -> JobFailedError:
    """A failed query's error, raised from what a micro-batch raised (as poll raises it)."""
    try:
        try:
            raise cause
        except Exception as err:
            raise JobFailedError("query 'dagger' failed: ...") from err
    except JobFailedError as failed:
        return failed


@pytest.mark.parametrize(
    "err",
    [
        SqlError("Unknown column 'order_numbr'", "SELECT order_numbr FROM booking", 1, 8),
        SchemaError("no message esb.Nope"),
        SpecError("sinks[0]", "the query has no column 'x'"),
        SecretError("${env:NOPE}", "the variable is not set"),
        SinkError("influx v1 http://h:8086 city/surge", "refused: HTTP 401", status=401),
        SinkError("influx v1 http://h:8086 city/surge", "no database", status=404),
        raised_from(SinkError("influx", "HTTP 403 forbidden", status=403)),
    ],
)
def test_the_specs_errors_and_refused_credentials_are_deterministic(err):
    assert deterministic(err)


@pytest.mark.parametrize(
    "err",
    [
        KafkaUnreachableError("127.0.0.1:1", "no broker answered"),
        SinkError("influx", "no answer from http://h:8086 after 5 retries"),
        SinkError("influx", "the server refused 10 points with HTTP 503", status=503),
        SinkError("influx", "HTTP 429: slow down", status=429),
        JobFailedError("query 'dagger' failed: [STREAM_FAILED] executor lost"),
        raised_from(RuntimeError("Cannot call methods on a stopped SparkContext")),
        ConnectionError("refused"),
    ],
)
def test_what_a_retry_may_mend_is_not(err):
    assert not deterministic(err)
