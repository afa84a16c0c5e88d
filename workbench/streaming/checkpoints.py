"""What a checkpoint belongs to: a manifest beside Spark's files, checked before Spark starts.

A checkpoint folder holds one streaming query's Kafka offsets and window state. Spark
itself only notices a different query when the state it expects is missing (a long JVM
trace, e.g. ``BATCH_METADATA_NOT_FOUND``), or not at all: an edited stateless query
silently continues from the old offsets. So every checkpoint carries
``dagger-checkpoint.json``: the dagger's name, a hash of what shapes the query's plan
(SQL, streams, event time, emit mode, deduplication; not the watermark delay, which
Spark may change on a restart without touching the state's layout), the streams (table, message,
topics or pattern), each stream's Kafka cluster id, the workbench version and when it
was made. :func:`check` compares it with the spec about to run and refuses a
mismatch in one :class:`CheckpointMismatchError` that says what to do; a checkpoint whose
streams now reach another Kafka cluster (offsets mean nothing there) is refused with a
:class:`KafkaClusterChangedError` that names the failover command.

A checkpoint made by an earlier workbench (Spark's files, no manifest) is adopted when
the Kafka topics its offsets name are the spec's topics; otherwise it is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import __version__
from workbench.exceptions import (
    CheckpointMismatchError,
    KafkaClusterChangedError,
    KafkaUnreachableError,
)
from workbench.kafka.identity import describe

if TYPE_CHECKING:
    from workbench.spec import DaggerSpec, StreamSpec

MANIFEST = "dagger-checkpoint.json"
QUERY = "sinks"  # the job's streaming query folder inside the checkpoint


@dataclass(frozen=True)
class Manifest:
    dagger: str
    spec_hash: str
    streams: list[dict[str, Any]]
    clusters: dict[str, str | None]  # table -> Kafka cluster id (None: not known)
    workbench_version: str
    created_at: str

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, folder / MANIFEST)


def stream_identity(stream: StreamSpec) -> dict[str, Any]:
    return {
        "table": stream.table,
        "message": stream.message,
        "topics": sorted(stream.topics or []),
        "topic_pattern": stream.topic_pattern,
    }


def spec_hash(spec: DaggerSpec) -> str:
    """A hash of what shapes the streaming plan and its state layout: equal hashes may share
    a checkpoint. Sinks, triggers, start offsets, parallelism, the description, the
    watermark delay (a restart with a new delay keeps the state), alert rules and notifiers
    are left out."""
    shape = {
        "sql": spec.sql.strip(),
        "streams": [
            {
                **stream_identity(s),
                "event_timestamp_field": s.event_timestamp_field,
                "max_recursion_depth": s.max_recursion_depth,  # shapes the decoded rows
            }
            for s in spec.streams
        ],
        "rowtime_attribute": spec.rowtime_attribute,
        "emit": spec.emit,
        "deduplicate": spec.deduplicate.model_dump() if spec.deduplicate else None,
    }
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cluster_id(stream: StreamSpec, timeout_s: float = 10.0) -> str | None:
    """The Kafka cluster id behind ``stream``'s bootstrap servers; None when the broker
    cannot be asked (Spark then reports the connection problem itself)."""

    try:  # options librdkafka does not know (sasl.jaas.config) leave the id unknown
        return describe(stream.bootstrap_servers, stream.kafka_options, timeout_s).cluster_id
    except KafkaUnreachableError:
        return None


def manifest_for(spec: DaggerSpec) -> Manifest:
    return Manifest(
        dagger=spec.name,
        spec_hash=spec_hash(spec),
        streams=[stream_identity(s) for s in spec.streams],
        clusters={s.table: cluster_id(s) for s in spec.streams},
        workbench_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def load(folder: Path) -> Manifest | None:
    path = folder / MANIFEST
    if not path.exists():
        return None
    return Manifest(**json.loads(path.read_text(encoding="utf-8")))


def has_progress(folder: Path) -> bool:
    """True when Spark has committed at least one micro-batch in the checkpoint."""
    commits = folder / QUERY / "commits"
    return commits.is_dir() and any(p.name.isdigit() for p in commits.iterdir())


def check(folder: Path, spec: DaggerSpec) -> str | None:
    """Refuse a checkpoint that belongs to something else; write the manifest of a new or
    adopted one. Returns a note for the user when an old checkpoint was adopted."""
    wanted = manifest_for(spec)
    found = load(folder)
    if found is not None:
        problems = differences(found, wanted)
        if problems:
            raise CheckpointMismatchError(str(folder), problems)
        changes = cluster_changes(found, wanted)
        if changes:
            raise KafkaClusterChangedError(str(folder), spec.name, changes)
        return None
    note = None
    if (folder / QUERY).exists():
        recorded = recorded_topics(folder)
        problems = _topic_problems(recorded, spec)
        if problems:
            raise CheckpointMismatchError(str(folder), problems, legacy=True)
        note = (
            f"checkpoint {folder} was written by an earlier workbench (no {MANIFEST}); "
            f"it read the spec's topics, so it is adopted as dagger '{spec.name}'"
        )
    wanted.save(folder)
    return note


def differences(found: Manifest, wanted: Manifest) -> list[str]:
    problems = []
    if found.dagger != wanted.dagger:
        problems.append(f"it belongs to dagger '{found.dagger}', not '{wanted.dagger}'")
    if found.streams != wanted.streams:
        problems.append(
            f"its streams are {_streams(found.streams)}, not {_streams(wanted.streams)}"
        )
    if found.spec_hash != wanted.spec_hash and found.streams == wanted.streams:
        problems.append(
            "the SQL (or event time, emit mode or deduplication) changed since it was made "
            f"(spec hash {found.spec_hash}, now {wanted.spec_hash})"
        )
    return problems


def cluster_changes(found: Manifest, wanted: Manifest) -> list[tuple[str, str, str]]:
    """(table, cluster id recorded, cluster id now) of each stream whose Kafka cluster
    changed; a stream whose id is unknown on either side (the broker could not be asked)
    counts as unchanged."""
    changes = []
    for table, cluster in wanted.clusters.items():
        before = found.clusters.get(table)
        if before and cluster and before != cluster:
            changes.append((table, before, cluster))
    return changes


def _streams(streams: list[dict[str, Any]]) -> str:
    parts = []
    for s in streams:
        source = s["topic_pattern"] and f"pattern {s['topic_pattern']}" or ",".join(s["topics"])
        parts.append(f"{s['table']} ({s['message']} from {source})")
    return "; ".join(parts)


def recorded_topics(folder: Path) -> set[str]:
    """The Kafka topics named in the latest offsets Spark wrote in the checkpoint."""
    offsets = folder / QUERY / "offsets"
    files = sorted((p for p in offsets.glob("*") if p.name.isdigit()), key=lambda p: int(p.name))
    if not files:
        return set()
    topics: set[str] = set()
    for line in files[-1].read_text(encoding="utf-8").splitlines()[2:]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            topics.update(value)
    return topics


def _topic_problems(recorded: set[str], spec: DaggerSpec) -> list[str]:
    if not recorded:
        return []
    listed = {t for s in spec.streams for t in s.topics or []}
    patterns = [re.compile(s.topic_pattern) for s in spec.streams if s.topic_pattern]
    foreign = {t for t in recorded if t not in listed and not any(p.fullmatch(t) for p in patterns)}
    unread = listed - recorded
    if not foreign and not unread:
        return []
    return [
        f"it has no {MANIFEST} (an earlier workbench wrote it) and read topics "
        f"{sorted(recorded)}, not this spec's {sorted(listed) or [p.pattern for p in patterns]}"
    ]
