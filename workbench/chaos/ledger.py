"""The ledger: what was produced against what landed, per event-time window, and the verdict.

``produced`` per window is computed independently of the pipeline: the load's generator is
seeded, so :func:`produced_windows` makes the same events again (same seed, start, rate
and count) and counts them by event-time window. ``landed`` comes from the dagger's sink
(:func:`landed_windows` reads a Parquet sink the way Spark does: only the files its
``_spark_metadata`` log committed, so a killed run's half-written batch does not count;
:func:`landed_influx` an InfluxDB 1.x measurement, a point per row: a rewritten point
replaces the old one, so a window written twice counts once, and a wrong count shows)
and ``dead_letters`` from its dead-letter path. Per window::

    produced = landed + dead letters - duplicates + missing

A window with ``missing > 0`` was lost (in part), one with ``duplicates > 0`` doubled
(in part); each is listed. Only windows the job's event-time watermark has closed count:
a window it has not passed yet is not final (Spark writes it once the watermark passes
its end), so it is listed as open, with what landed so far, and is neither lost nor
doubled. The verdict passes when no closed window is lost or doubled.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def window_of(epoch_s: float, window_s: float) -> int:
    """The epoch second the event-time window holding ``epoch_s`` starts at."""
    return int(epoch_s // window_s * window_s)


def produced_windows(
    kind: str,
    seed: int,
    start: datetime,
    rate: float,
    count: int,
    window_s: float,
    malformed: float = 0.0,
    planted: Counter[int] | None = None,
) -> Counter[int]:
    """How many of the load's events fall in each event-time window (made again from the
    seed: :func:`workbench.chaos.load.drive` records ``start``). With a ``malformed``
    fraction, ``planted`` counts the undecodable ones per window (the dead letters due)."""
    from workbench.dev.generator import Generator

    gen = Generator(seed=seed, start=start, rate_per_s=rate, malformed_fraction=malformed)
    counts: Counter[int] = Counter()
    if malformed:
        events = [(r.event, r.malformed) for r in gen.records(kind, count)]
    else:
        events = [(event, False) for _, event in gen.timed(kind, count)]
    for event, bad in events:
        stamp = datetime.fromisoformat(event["event_timestamp"].replace("Z", "+00:00"))
        window = window_of(stamp.timestamp(), window_s)
        counts[window] += 1
        if bad and planted is not None:
            planted[window] += 1
    return counts


def dead_letter_windows(folder: Path, topics: set[str], window_s: float) -> Counter[int]:
    """Per window of their Kafka timestamp, the dead letters of ``topics`` a dagger's
    dead-letter Parquet folder holds (``run=*/batch=*``: a replayed batch rewrote its own
    folder, so each letter is there once)."""
    import pyarrow.parquet as pq

    counts: Counter[int] = Counter()
    for path in sorted(Path(folder).rglob("*.parquet")):
        for row in pq.read_table(path, columns=["topic", "kafka_timestamp"]).to_pylist():
            if row["topic"] in topics:
                counts[window_of(row["kafka_timestamp"].timestamp(), window_s)] += 1
    return counts


def committed_parquet(folder: Path) -> list[Path]:
    """The Parquet files of a Spark file sink that its ``_spark_metadata`` log committed
    (every ``*.parquet`` file when there is no log)."""
    log = folder / "_spark_metadata"
    if not log.is_dir():
        return sorted(folder.rglob("*.parquet"))
    files: dict[str, bool] = {}
    entries = [e for e in log.iterdir() if e.name[:1].isdigit() and e.suffix != ".crc"]
    for entry in sorted(entries, key=_batch_number):
        for line in entry.read_text().splitlines()[1:]:  # the first line is the version
            item = json.loads(line)
            files[item["path"]] = item.get("action", "add") == "add"
    return [Path(p.removeprefix("file://")) for p, added in files.items() if added]


def _batch_number(path: Path) -> int:
    head = path.name.partition(".")[0]
    return int(head) if head.isdigit() else -1


def landed_windows(
    folder: Path,
    time_column: str,
    window_s: float,
    count_column: str | None = None,
    marks_end: bool = False,
    key_column: str | None = None,
    keys: dict[int, Counter[str]] | None = None,
) -> Counter[int]:
    """Per event-time window, the records a Parquet sink holds: its rows, or the sum of
    ``count_column`` when the dagger writes counts (an aggregate per window).
    ``marks_end``: ``time_column`` holds each window's end, not its start. ``keys``
    collects how often each ``key_column`` value landed per window."""
    import pyarrow.parquet as pq

    counts: Counter[int] = Counter()
    for path in committed_parquet(Path(folder)):
        table = pq.read_table(path).to_pylist()
        for row in table:
            when = row[time_column]
            if isinstance(when, datetime):
                when = when if when.tzinfo else when.replace(tzinfo=UTC)  # Spark writes UTC
            epoch = when.timestamp() if isinstance(when, datetime) else float(when)
            if marks_end:
                epoch -= window_s
            window = window_of(epoch, window_s)
            counts[window] += int(row[count_column]) if count_column else 1
            if key_column and keys is not None:
                keys.setdefault(window, Counter())[str(row[key_column])] += 1
    return counts


def landed_influx(
    sink: Any, window_s: float, count_column: str | None = None, marks_end: bool = False
) -> Counter[int]:
    """Per event-time window, the records an InfluxDB 1.x measurement holds: its points
    (each a row; its time the row's window), or the sum of their ``count_column`` field.
    ``sink`` has ``url``, ``database`` and ``measurement``."""
    import requests

    field_ = f'"{count_column}"' if count_column else "*"
    query = f'SELECT {field_} FROM "{sink.measurement}" GROUP BY *'
    answer = requests.get(
        sink.url.rstrip("/") + "/query",
        params={"q": query, "db": sink.database, "epoch": "ms"},
        timeout=30,
    )
    answer.raise_for_status()
    counts: Counter[int] = Counter()
    for result in answer.json().get("results", []):
        for series in result.get("series", []):
            at = series["columns"].index(count_column) if count_column else None
            for values in series["values"]:
                epoch = values[0] / 1000 - (window_s if marks_end else 0)
                counts[window_of(epoch, window_s)] += int(values[at] or 0) if at is not None else 1
    return counts


def landed_in(spec: Any, keys: dict[int, Counter[str]] | None = None) -> Counter[int]:
    """What the sink a :class:`~workbench.chaos.scenario.LedgerSpec` names holds per
    window (nothing while the sink does not answer); ``keys`` as in :func:`landed_windows`."""
    marks_end = spec.marks == "end"
    if spec.influx is not None:
        import requests

        try:
            return landed_influx(spec.influx, spec.window, spec.count_column, marks_end)
        except requests.RequestException:
            return Counter()
    return landed_windows(
        Path(spec.parquet), spec.time_column, spec.window, spec.count_column, marks_end,
        spec.key_column, keys,
    )  # fmt: skip


@dataclass
class WindowRow:
    window: str
    produced: int
    landed: int
    dead_letters: int
    missing: int
    duplicates: int
    #: the undecodable records the load planted (from its seed): the dead letters due
    malformed: int = 0


@dataclass
class Ledger:
    window_s: float
    rows: list[WindowRow] = field(default_factory=list)
    sink: str = ""
    #: per window, the keys a per-record sink holds more than once
    duplicate_keys: dict[str, list[str]] = field(default_factory=dict)
    #: the windows the job's watermark has not closed: not final, so not counted
    open: list[WindowRow] = field(default_factory=list)
    #: the job's event-time watermark the windows were judged by (None: the scenario's
    #: ``watermark_delay`` after the last load's end)
    watermark: str | None = None

    @property
    def lost(self) -> list[WindowRow]:
        return [r for r in self.rows if r.missing]

    @property
    def doubled(self) -> list[WindowRow]:
        return [r for r in self.rows if r.duplicates]

    @property
    def passed(self) -> bool:
        return not self.lost and not self.doubled

    def totals(self) -> dict[str, int]:
        keys = ("produced", "landed", "dead_letters", "missing", "duplicates", "malformed")
        return {k: sum(getattr(r, k) for r in self.rows) for k in keys}

    def verdict(self) -> str:
        still = ""
        if self.open:
            under = f" at {self.watermark}" if self.watermark else ""
            still = f"; {len(self.open)} window(s) still open under the job's watermark{under}"
        if self.passed:
            return f"pass: all {len(self.rows)} windows balance{still}"
        return (
            f"fail: {len(self.lost)} window(s) lost records, "
            f"{len(self.doubled)} window(s) doubled records{still}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "sink": self.sink,
            "window_s": self.window_s,
            "rows": [asdict(r) for r in self.rows],
            "totals": self.totals(),
            "lost": [r.window for r in self.lost],
            "doubled": [r.window for r in self.doubled],
            "duplicate_keys": self.duplicate_keys,
            "open": [r.window for r in self.open],
            "open_rows": [asdict(r) for r in self.open],
            "watermark": self.watermark,
            "passed": self.passed,
            "verdict": self.verdict(),
        }


def balance(
    produced: Mapping[int, int],
    landed: Mapping[int, int],
    window_s: float,
    dead_letters: Mapping[int, int] | None = None,
    malformed: Mapping[int, int] | None = None,
    keys: Mapping[int, Counter[str]] | None = None,
) -> Ledger:
    """The ledger of every window either side knows; ``malformed``: the dead letters the
    load planted per window; ``keys``: each window's keys with how often they landed."""
    dead, planted = dead_letters or {}, malformed or {}
    ledger = Ledger(window_s)
    for start in sorted(set(produced) | set(landed) | set(dead)):
        made, got, bad = produced.get(start, 0), landed.get(start, 0), dead.get(start, 0)
        iso = _iso(start)
        gap = made - got - bad
        ledger.rows.append(
            WindowRow(iso, made, got, bad, max(gap, 0), max(-gap, 0), planted.get(start, 0))
        )
        twice = sorted(k for k, n in (keys or {}).get(start, Counter()).items() if n > 1)
        if twice:
            ledger.duplicate_keys[iso] = twice
    return ledger


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def job_watermark(view: Mapping[str, Any]) -> float | None:
    """The event-time watermark (epoch seconds) of a job from its job service view; None
    before the job has seen an event (Spark's watermark is then the epoch) or without one."""
    mark = (view.get("metrics") or {}).get("watermark")
    if not mark:
        return None
    stamp = datetime.fromisoformat(str(mark).replace("Z", "+00:00")).timestamp()
    return stamp if stamp > 0 else None


def scenario_ledger(
    runs: list[dict[str, Any]],
    spec: Any,
    watermark: Callable[[], float | None] | None = None,
) -> Ledger:
    """The ledger of a scenario's runs (their loads may share windows, so one ledger for
    all): produced (made again from each load's seed) against what the sink ``spec``
    names holds. ``watermark`` asks the job under test for its event-time watermark
    (epoch seconds, None when it has none yet): only the windows it has closed count,
    the others are listed as open. Without one, the windows count that ``spec``'s
    ``watermark_delay`` after the last load's end closes. The sink is read once it holds
    every window due (the watermark passed the windows the loads closed) or ``spec.wait``
    has passed. Windows before the first load are not the scenario's; any later window
    the sink holds and no load produced counts as doubled."""
    import time

    produced: Counter[int] = Counter()
    planted: Counter[int] = Counter()
    topics: set[str] = set()
    last_event = 0.0
    for run in runs:
        load = run.get("load")
        if not load:
            continue
        start = datetime.fromisoformat(load["started_at"])
        produced += produced_windows(
            load["kind"], load["seed"], start, load["target_rate"], load["sent"], spec.window,
            load.get("malformed_fraction", 0.0), planted,
        )  # fmt: skip
        topics.add(load["topic"])
        last_event = max(last_event, start.timestamp() + load["seconds"])
    due = {w for w in produced if w + spec.window <= last_event - spec.watermark_delay}
    deadline = time.monotonic() + spec.wait
    while True:
        # the watermark first: a window it closed was written before it was reported
        mark = watermark() if watermark is not None else None
        edge = last_event - spec.watermark_delay if mark is None else mark
        closed = {w for w in produced if w + spec.window <= edge}
        keys: dict[int, Counter[str]] = {}
        landed = landed_in(spec, keys)
        if (due <= closed <= set(landed)) or time.monotonic() >= deadline:
            break
        time.sleep(1.0)
    # windows of the scenario's time only (the sink may hold earlier ones); a window no
    # load produced and the sink holds is doubled once the watermark closed it
    first = min(produced, default=0)

    def mine(counts: Mapping[int, Any]) -> dict[int, Any]:
        return {
            w: n
            for w, n in counts.items()
            if w in closed or (w >= first and w not in produced and w + spec.window <= edge)
        }

    dead: Counter[int] = Counter()
    if spec.dead_letters:
        dead = dead_letter_windows(Path(spec.dead_letters), topics, spec.window)
    counted = Counter({w: n for w, n in produced.items() if w in closed})
    ledger = balance(counted, mine(landed), spec.window, mine(dead), planted, mine(keys))
    still = {w: n for w, n in produced.items() if w not in closed}
    ledger.open = balance(still, _only(landed, still), spec.window, _only(dead, still)).rows
    ledger.watermark = None if mark is None else _iso(int(mark))
    ledger.sink = spec.describe()
    return ledger


def _only(counts: Mapping[int, int], windows: Mapping[int, int]) -> dict[int, int]:
    return {w: n for w, n in counts.items() if w in windows}
