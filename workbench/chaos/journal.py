"""The revert journal: every fault applied is written down as soon as it acted and marked
reverted after, so a run killed in between (SIGKILL, a power cut) leaves a list of what
to undo; the next run replays it first (:meth:`RevertJournal.replay`).

One JSON object a line in ``$WORKBENCH_HOME/chaos/journal.jsonl``: ``{"id", "fault",
"record", "at"}`` when a fault is applied, ``{"id", "reverted", "at"}`` when it is
undone. A fault is pending while its id has no ``reverted`` line.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.chaos.faults import FAULTS

if TYPE_CHECKING:
    from workbench.chaos.env import ChaosEnv


class RevertJournal:
    def __init__(self, path: Path | None = None):
        if path is None:
            from workbench.paths import subdir

            path = subdir("chaos") / "journal.jsonl"
        self.path = Path(path)

    def applied(self, fault: str, record: dict[str, Any]) -> str:
        """Write down ``fault`` (with its revert record) as applied; returns its id."""
        entry_id = uuid.uuid4().hex[:12]
        self._append({"id": entry_id, "fault": fault, "record": record, "at": time.time()})
        return entry_id

    def reverted(self, entry_id: str) -> None:
        self._append({"id": entry_id, "reverted": True, "at": time.time()})

    def pending(self) -> list[dict[str, Any]]:
        """Faults applied and not reverted, oldest first."""
        if not self.path.exists():
            return []
        applied: dict[str, dict[str, Any]] = {}
        for line in self.path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            if entry.get("reverted"):
                applied.pop(entry["id"], None)
            elif "fault" in entry:
                applied[entry["id"]] = entry
        return list(applied.values())

    def replay(self, env: ChaosEnv | None = None) -> list[dict[str, Any]]:
        """Revert every pending fault, newest first; returns those reverted. A revert that
        fails stays pending (and raises) so that the next run tries again."""

        done = []
        for entry in reversed(self.pending()):
            FAULTS.get(entry["fault"]).revert(entry["record"], env)
            self.reverted(entry["id"])
            done.append(entry)
        return done

    def _append(self, entry: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as out:
            out.write(json.dumps(entry) + "\n")
            out.flush()
            os.fsync(out.fileno())
