"""Fixtures of the UI tests: a real JupyterLab with the job service and the lab extension
(:mod:`labkit`), Debian's Chromium (``chromium`` from services_browser)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))  # servekit
