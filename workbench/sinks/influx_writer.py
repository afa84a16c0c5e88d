"""Write result rows as points to InfluxDB 1.x (v1 API), or to InfluxDB 2.x/3.x and
VictoriaMetrics (v2 API), following Dagger's row convention (see :func:`to_points`).

Writes are idempotent: a point is keyed by measurement, tags and time, so writing the
same rows again leaves the same points, and InfluxDB keeps the newest field values of a
rewritten point. It merges fields, though: a field that is null in the later write keeps
its earlier value. (VictoriaMetrics 1.79 does not promise which of several values written
for one timestamp it keeps: see :class:`workbench.dev.timeseries.VictoriaMetrics`.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Protocol

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from workbench.exceptions import SinkError
from workbench.moments import epoch_ms

if TYPE_CHECKING:
    from influxdb_client import Point

    from workbench.sinks.influx import InfluxConfig

TAG_PREFIX, LABEL_PREFIX = "tag_", "label_"
RETRY_STATUSES = (429, 500, 502, 503, 504)
TIMEOUT_S = 30.0

FieldValue = bool | int | float | str


def to_points(
    rows: Iterable[Mapping[str, Any]], measurement: str, time_column: str = "window_timestamp"
) -> list[Point]:
    """Points for ``rows`` by Dagger's convention, with millisecond times.

    ``time_column`` (a datetime, naive meaning UTC, or epoch milliseconds) is the point's
    time; ``tag_*`` columns are tags keeping the prefix, ``label_*`` columns tags without
    it; every other column is a field: bool, int, float and str as they are, Decimal as
    float, datetime as epoch milliseconds (an integer, so it stays numeric everywhere).
    Null and non-finite values are skipped, and so is a row left with no fields.
    """
    points = (_to_point(row, measurement, time_column) for row in rows)
    return [point for point in points if point is not None]


def _to_point(row: Mapping[str, Any], measurement: str, time_column: str) -> Point | None:
    from influxdb_client import Point, WritePrecision

    sink = f"influx measurement '{measurement}'"
    point = Point(measurement).time(_time_ms(row, time_column, sink), WritePrecision.MS)
    has_fields = False
    for column, value in row.items():
        if value is None or column == time_column:
            continue
        if column.startswith(TAG_PREFIX):
            point.tag(column, str(value))
        elif column.startswith(LABEL_PREFIX):
            point.tag(column[len(LABEL_PREFIX) :], str(value))
        else:
            field = _field_value(value, column, sink)
            if field is not None:
                point.field(column, field)
                has_fields = True
    return point if has_fields else None


def _time_ms(row: Mapping[str, Any], column: str, sink: str) -> int:
    if column not in row:
        columns = ", ".join(row) or "(none)"
        raise SinkError(
            sink,
            f"a row has no time column '{column}'; its columns: {columns}. "
            "Select the column in the SQL, or name another one in the sink's 'time_column'.",
        )
    value = row[column]
    if isinstance(value, datetime):
        return epoch_ms(value)
    if isinstance(value, Integral) and not isinstance(value, bool):
        return int(value)
    what = "is null" if value is None else f"holds {type(value).__name__} {value!r}"
    raise SinkError(
        sink, f"time column '{column}' {what} in a row; it needs a timestamp or epoch millis."
    )


def _field_value(value: object, column: str, sink: str) -> FieldValue | None:
    if isinstance(value, bool | str):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real | Decimal):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, datetime):
        return epoch_ms(value)
    raise SinkError(
        sink,
        f"column '{column}' holds {type(value).__name__}, which is no InfluxDB field type "
        "(bool, int, float, str). Select scalar columns, or cast this one in the SQL.",
    )


class _Transport(Protocol):
    def send(self, points: Sequence[Point]) -> None: ...

    def close(self) -> None: ...


class InfluxWriter:
    """Writes rows to the server an :class:`InfluxConfig` names, ``batch_size`` points a request.

    Connection errors, 429 and 5xx answers are retried ``retries`` times with exponential
    backoff; points the server refuses raise :class:`SinkError` with its status and text.
    """

    def __init__(self, config: InfluxConfig):
        self.config = config
        self._transport = TRANSPORTS[config.api](config)

    def write(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write ``rows`` as points; returns how many points were written."""
        points = to_points(rows, self.config.measurement, self.config.time_column)
        size = max(self.config.batch_size, 1)
        for start in range(0, len(points), size):
            self._transport.send(points[start : start + size])
        return len(points)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> InfluxWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class V1Transport:
    """InfluxDB 1.x: line protocol POSTed to ``/write?db=&rp=&precision=ms``."""

    def __init__(self, config: InfluxConfig):
        self.config, self.sink = config, _describe(config)
        self.endpoint = config.url.rstrip("/") + "/write"
        given = {"db": config.database, "rp": config.retention_policy, "precision": "ms"}
        given |= {"u": config.username, "p": config.password}
        self.params = {key: value for key, value in given.items() if value}
        self.session = requests.Session()
        adapter = HTTPAdapter(max_retries=retry_policy(config.retries))
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def send(self, points: Sequence[Point]) -> None:
        body = "\n".join(point.to_line_protocol() for point in points).encode()
        try:
            response = self.session.post(
                self.endpoint, params=self.params, data=body, timeout=TIMEOUT_S
            )
        except requests.RequestException as err:
            raise _unreachable(self.sink, self.config, err) from err
        if not 200 <= response.status_code < 300:
            raise _refused(self.sink, len(points), response.status_code, response.text)

    def close(self) -> None:
        self.session.close()


class V2Transport:
    """InfluxDB 2.x/3.x and VictoriaMetrics: influxdb-client's synchronous write API."""

    def __init__(self, config: InfluxConfig):
        from influxdb_client import InfluxDBClient
        from influxdb_client.client.write_api import SYNCHRONOUS

        self.config, self.sink = config, _describe(config)
        self.client = InfluxDBClient(
            url=config.url,
            token=config.token or "",
            org=config.org or "",
            timeout=int(TIMEOUT_S * 1000),
            retries=retry_policy(config.retries),
        )
        self.api = self.client.write_api(write_options=SYNCHRONOUS)

    def send(self, points: Sequence[Point]) -> None:
        from influxdb_client.rest import ApiException
        from urllib3.exceptions import HTTPError

        bucket, org = self.config.bucket or "", self.config.org or ""
        try:
            self.api.write(bucket, org, list(points))  # each point carries its ms precision
        except ApiException as err:
            raise _refused(self.sink, len(points), err.status, err.body) from err
        except (HTTPError, OSError) as err:
            raise _unreachable(self.sink, self.config, err) from err

    def close(self) -> None:
        self.api.close()
        self.client.close()


TRANSPORTS: dict[int, Callable[[InfluxConfig], _Transport]] = {1: V1Transport, 2: V2Transport}


def retry_policy(retries: int) -> Retry:
    """Retry connection errors, 429 and 5xx: at once, then after 1s, 2s, 4s... (or Retry-After).

    POSTs are retried too: a point rewritten with the same values is the same point.
    """
    return Retry(
        total=retries,
        backoff_factor=0.5,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=None,
        raise_on_status=False,
        respect_retry_after_header=True,
    )


def _describe(config: InfluxConfig) -> str:
    target = f"database '{config.database}'" if config.api == 1 else f"bucket '{config.bucket}'"
    return f"influx sink (measurement '{config.measurement}', {target} at {config.url})"


#: (words in the server's error, what to do); the first match wins.
_HINTS: tuple[tuple[str, str], ...] = (
    (
        "field type conflict",
        "A column changed type between writes (e.g. integer, then float): cast it in the "
        "SQL so it always has one type, or write to a new measurement.",
    ),
    (
        "database not found",
        "Create the database (InfluxQL: CREATE DATABASE <name>) or fix the sink's 'database'.",
    ),
    ("retention policy not found", "Create the retention policy or fix 'retention_policy'."),
    ("bucket", "Create the bucket, or fix the sink's 'bucket' and 'org'."),
    ("authoriz", "Check the sink's 'token' (v2) or 'username'/'password' (v1)."),
    ("authenticat", "Check the sink's 'token' (v2) or 'username'/'password' (v1)."),
    ("too large", "Lower the sink's 'batch_size'."),
)
#: What to do when no words match, by HTTP status.
_STATUS_HINTS: dict[int, str] = {
    401: "Check the sink's 'token' (v2) or 'username'/'password' (v1).",
    403: "Check the sink's 'token' (v2) or 'username'/'password' (v1).",
    404: "Check the sink's 'url' and 'api': InfluxDB 1.x needs 'api: 1'.",
    413: "Lower the sink's 'batch_size'.",
}
_DEFAULT_HINT = "Fix the rows or the sink's settings ('url', 'database'/'bucket', 'api')."


def _refused(sink: str, count: int, status: int | None, body: object) -> SinkError:
    detail = _error_text(body)
    lowered = detail.lower()
    fallback = _STATUS_HINTS.get(status or 0, _DEFAULT_HINT)
    hint = next((hint for words, hint in _HINTS if words in lowered), fallback)
    message = f"the server refused {count} points with HTTP {status}: {detail}. {hint}"
    return SinkError(sink, message, status=status, detail=detail)


def _unreachable(sink: str, config: InfluxConfig, err: BaseException) -> SinkError:
    return SinkError(
        sink,
        f"no answer from {config.url} after {config.retries} retries ({err}). "
        "Is the server running, and is 'url' right?",
    )


def _error_text(body: object) -> str:
    """The error message in a server's answer: InfluxDB's JSON ``error``/``message``, or text."""
    text = body.decode(errors="replace") if isinstance(body, bytes) else str(body or "")
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip() or "(no error text)"
    if isinstance(data, dict):
        return str(data.get("error") or data.get("message") or text).strip()
    return text.strip()
