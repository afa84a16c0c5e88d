"""The dashboard notebook (``notebooks/city_dashboard.ipynb``, and the same as
``templates/dashboard.ipynb``), generated here so the two never drift apart:
``python -m workbench.dashboard.notebook`` rewrites both.

It is a title, a papermill ``parameters`` cell (None: from the environment or the YAML
config) and one cell that builds and starts the dashboard. Voila hides the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TITLE = """# City dashboard

Live results of a dagger for your city: choose the city, the service type and the metric.
The map shows the latest window; the chart, the city's total per window."""

PARAMETERS = """# Parameters (papermill). None: from $WORKBENCH_DASHBOARD_* or the YAML config.
config = None  # a dashboard YAML file
store = None  # KIND:TARGET, e.g. "influx1:http://127.0.0.1:8086/dagger"
measurement = None
dagger = None  # the dagger's spec YAML: the heading and the window"""

BODY = """from workbench.dashboard.app import Dashboard

dashboard = Dashboard.from_config(
    config, store=store, measurement=measurement, dagger=dagger
).start()
dashboard"""

FILES = ("notebooks/city_dashboard.ipynb", "templates/dashboard.ipynb")


def _cell(name: str, kind: str, source: str, tags: list[str] | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": name, "metadata": {}, "source": source}
    if tags:
        cell["metadata"]["tags"] = tags
    if kind == "code":
        cell |= {"execution_count": None, "outputs": []}
    return cell


def dashboard_notebook() -> dict[str, Any]:
    """The notebook as nbformat 4 JSON data, with no outputs."""
    return {
        "cells": [
            _cell("title", "markdown", TITLE),
            _cell("parameters", "code", PARAMETERS, ["parameters"]),
            _cell("dashboard", "code", BODY),
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def render() -> str:
    return json.dumps(dashboard_notebook(), indent=1) + "\n"


def write(root: Path) -> list[Path]:
    """Write the notebook to every place in :data:`FILES` under ``root``."""
    written = []
    for name in FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(), encoding="utf-8")
        written.append(path)
    return written


def bundled_path() -> Path:
    """The dashboard notebook of a source checkout, else a generated copy in ``.workbench``."""
    from workbench.paths import PACKAGE_DIR, subdir

    checkout = PACKAGE_DIR.parent / FILES[0]
    if checkout.exists():
        return checkout
    path = subdir("dashboard") / Path(FILES[0]).name
    path.write_text(render(), encoding="utf-8")
    return path


if __name__ == "__main__":
    from workbench.paths import PACKAGE_DIR

    for path in write(PACKAGE_DIR.parent):
        print(f"wrote {path}")
