"""Generations of a file-sink folder: one exactly-once log, written by many checkpoints.

Spark's file sink keeps a folder exactly once through its log (``_spark_metadata``):
a batch id at or below the log's latest is skipped as already committed. Batch ids
restart at 0 with every new checkpoint, so a new query (an edited dagger on a new
checkpoint) writing into a folder an earlier query filled would be skipped, silently.

Each streaming query (its id is stable across restarts of one checkpoint) is a
*generation* of the folder with a *base*: its micro-batch ``b`` is the log's batch
``base + b``. A new generation starts right after the log's latest batch, so the log
stays contiguous and readers see one table. The generations are kept, in the order
they started, in ``_dagger_generations.json`` beside the log (written atomically, and
before the batch it maps, so a crash between the two replays to the same id).

A replayed batch of a generation maps to the id it had, which the log holds: skipped.
A batch of an older generation whose range a newer one has taken (an old checkpoint
resumed after a newer one wrote) cannot be placed without breaking the log, and is
refused with :class:`~workbench.exceptions.SinkGenerationError`, never skipped.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlparse

from workbench.exceptions import SinkGenerationError

FILE = "_dagger_generations.json"
LOG = "_spark_metadata"
_LOG_FILE = re.compile(r"^(\d+)(\.compact)?$")


@dataclass(frozen=True)
class Placement:
    sink_batch: int  # the batch id in the folder's log
    committed: bool  # the log already holds it: a replay, skip it


def _entries(folder: Path) -> list[tuple[int, Path]]:
    """The folder's log entries (``N`` and ``N.compact``) with their batch ids, oldest first."""
    log = folder / LOG
    if not log.is_dir():
        return []
    return sorted((int(m.group(1)), p) for p in log.iterdir() if (m := _LOG_FILE.match(p.name)))


def _paths(entry: Path) -> dict[Path, bool]:
    """The files a log entry names, each with whether it adds (not deletes) it."""
    files = {}
    for line in entry.read_text(encoding="utf-8").splitlines()[1:]:  # first line: version
        item = json.loads(line)
        files[Path(unquote(urlparse(item["path"]).path))] = item.get("action", "add") == "add"
    return files


def logged_files(folder: Path) -> list[Path] | None:
    """The data files the folder's file-sink log holds (its latest compaction and the
    entries after it), in the order it logged them; None when there is no log."""
    if not (folder / LOG).is_dir():
        return None
    entries = _entries(folder)
    compacts = [n for n, p in entries if p.name.endswith(".compact")]
    first = compacts[-1] if compacts else -1
    files: dict[Path, bool] = {}
    for number, path in entries:
        if number > first or (number == first and path.name.endswith(".compact")):
            files.update(_paths(path))
    return [p for p, kept in files.items() if kept]


def newest_logged(folder: Path) -> Path | None:
    """The data file the folder's log added last (None: no log, or no file in it); entries of
    batches that wrote no file are passed over, back to the latest compaction at most."""
    for _, entry in reversed(_entries(folder)):
        added = [p for p, adds in _paths(entry).items() if adds]
        if added or entry.name.endswith(".compact"):
            return added[-1] if added else None
    return None


def latest_logged(folder: Path) -> int:
    """The latest batch id in the folder's file-sink log; -1 when there is none."""
    entries = _entries(folder)
    return entries[-1][0] if entries else -1


class Generations:
    """The generations of one sink folder; ``describe`` names the sink in errors."""

    def __init__(self, folder: Path, describe: str):
        self.folder, self.describe = folder, describe

    def load(self) -> list[dict]:
        path = self.folder / FILE
        if not path.exists():
            return []
        return list(json.loads(path.read_text(encoding="utf-8"))["generations"])

    def _save(self, generations: list[dict]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{FILE}.tmp"
        tmp.write_text(json.dumps({"generations": generations}, indent=2) + "\n")
        os.replace(tmp, self.folder / FILE)

    def place(self, query: str, batch_id: int, checkpoint: str) -> Placement:
        """Where ``query``'s micro-batch ``batch_id`` goes in the folder's log."""
        latest = latest_logged(self.folder)
        generations = self.load() if latest >= 0 else []  # an emptied folder starts afresh
        index = next((i for i, g in enumerate(generations) if g["query"] == query), None)
        if index is None:
            base = self._new_base(generations, latest, batch_id)
            generations.append(
                {
                    "query": query,
                    "base": base,
                    "checkpoint": checkpoint,
                    "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            self._save(generations)
            index = len(generations) - 1
        generation = generations[index]
        sink_batch = generation["base"] + batch_id
        newer = generations[index + 1] if index + 1 < len(generations) else None
        if newer is None or sink_batch < newer["base"]:
            if sink_batch <= latest:
                return Placement(sink_batch, committed=True)
            if newer is None and sink_batch == latest + 1:
                return Placement(sink_batch, committed=False)
        raise self._conflict(generation, newer, batch_id, latest)

    @staticmethod
    def _new_base(generations: list[dict], latest: int, batch_id: int) -> int:
        if not generations and batch_id > 0 and latest >= 0:
            # A query that wrote here before generations were kept: its ids are the log's.
            return 0
        return latest + 1 - batch_id  # this batch goes right after the log's latest

    def _conflict(self, generation: dict, newer: dict | None, batch_id: int, latest: int):
        if newer is not None:
            reason = (
                f"checkpoint {generation['checkpoint']} resumed after a newer run "
                f"(checkpoint {newer['checkpoint']}, started {newer['started_at']}) wrote to "
                "this folder"
            )
        else:
            reason = f"its log ends at batch {latest} but this run is at batch {batch_id}"
        return SinkGenerationError(
            self.describe,
            f"{reason}, so batch {batch_id} cannot be written exactly once. "
            "Run this version with a new --checkpoint (it continues the folder as a new "
            f"generation), or write to another path. Generations: {self.folder / FILE}",
        )
