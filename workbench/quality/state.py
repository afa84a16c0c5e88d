"""What a quality run remembers between micro-batches, one JSON file per batch id.

``quality/state/N.json`` under the checkpoint is written after batch ``N``; batch ``N``
starts from the latest file before ``N``, so a replayed batch sees what its first run
saw (idempotent). It holds the largest event time seen (the watermark is that minus the
allowed lateness), the last offset read per partition (to find gaps across batches) and,
per stored facts folder, its latest window (to prune folders of closed windows).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

KEEP = 10  # state files kept behind the latest


@dataclass
class QualityState:
    max_event_ms: int | None = None
    last_offsets: dict[str, int] = field(default_factory=dict)  # "topic/partition" -> offset
    folders: dict[str, int] = field(default_factory=dict)  # batch id -> latest window_start

    def watermark(self, allowed_lateness_ms: int) -> int | None:
        """Event time before which windows are closed (None before any event)."""
        return None if self.max_event_ms is None else self.max_event_ms - allowed_lateness_ms

    def closed(self, window_start: int, window_ms: int, allowed_lateness_ms: int) -> bool:
        mark = self.watermark(allowed_lateness_ms)
        return mark is not None and window_start + window_ms <= mark


def where(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


class StateFiles:
    def __init__(self, folder: Path):
        self.folder = folder

    def _ids(self) -> list[int]:
        if not self.folder.is_dir():
            return []
        return sorted(int(p.stem) for p in self.folder.glob("*.json") if p.stem.isdigit())

    def before(self, batch_id: int) -> QualityState:
        """The state batch ``batch_id`` starts from."""
        earlier = [i for i in self._ids() if i < batch_id]
        if not earlier:
            return QualityState()
        data = json.loads((self.folder / f"{earlier[-1]}.json").read_text())
        return QualityState(**data)

    def save(self, batch_id: int, state: QualityState) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{batch_id}.json.tmp"
        tmp.write_text(json.dumps(asdict(state)))
        tmp.replace(self.folder / f"{batch_id}.json")
        for old in [i for i in self._ids() if i < batch_id][:-KEEP]:
            (self.folder / f"{old}.json").unlink(missing_ok=True)
