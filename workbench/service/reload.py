"""Reloading ``service.yaml`` while the service runs (SIGHUP, ``workbench service reload``,
``POST service/reload``).

The keys read anew are :data:`RELOADED`: the Spark clusters, the teams file (and what it
holds) and the API tokens. They are swapped into the running config in one step, so the
supervisor's next tick and the next request see them. A file that does not load (bad
YAML, a key that does not validate, a teams file that does not load) changes nothing:
the error says why, and the old config stays. Other keys that changed are listed as
needing a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.jobs import authz
from workbench.jobs.config import INTERNAL, ServiceConfig

#: the service.yaml keys a reload applies
RELOADED = ("clusters", "teams_file", "tokens", "tokens_file")


def reload_config(service: Any, config_file: Path | None = None) -> dict[str, Any]:
    """Read ``config_file`` (default ``STATE/service.yaml``) again and apply its
    :data:`RELOADED` keys to ``service`` (a :class:`~workbench.service.job_service.
    JobService`); raises the file's error, changing nothing, when it does not load."""
    old = service.config
    new = ServiceConfig.load(old.state_dir, config_file)
    teams = authz.Teams.load(new.teams_file)
    changed = [key for key in RELOADED if getattr(new, key) != getattr(old, key)]
    if teams != service.teams and "teams_file" not in changed:
        changed.append("teams")
    for key in RELOADED:
        setattr(old, key, getattr(new, key))
    service.teams = teams
    return {
        "reloaded": changed,
        "restart_needed": [
            key
            for key, info in ServiceConfig.model_fields.items()
            if key not in RELOADED
            and info.json_schema_extra != INTERNAL
            and getattr(new, key) != getattr(old, key)
        ],
        "clusters": sorted(old.clusters),
        "teams": sorted(teams.members) if teams else [],
    }


def summary(result: dict[str, Any]) -> str:
    """One line saying what a reload did."""
    changed = ", ".join(result["reloaded"]) or "nothing changed"
    line = f"service.yaml reloaded: {changed}; clusters {', '.join(result['clusters'])}"
    if result["teams"]:
        line += f"; teams {', '.join(result['teams'])}"
    if result["restart_needed"]:
        line += f"; changed but applied only on restart: {', '.join(result['restart_needed'])}"
    return line
