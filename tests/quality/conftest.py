"""The quality tests use the job tests' helpers (run folders, the job service kit)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs"))  # runfolder, jobkit
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))  # servekit, healthkit
