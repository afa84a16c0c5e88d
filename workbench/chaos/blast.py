"""Blast radius: the jobs a case acts on, resolved through the job service when it starts.

``job``: the scenario's job (or the one ``chaos run --job`` names); ``team``: every job of
the scenario's ``team`` that should be running; ``cluster``: every job that should be
running on the case's ``cluster`` (a Spark cluster of the service; ``local`` by default).
"Should be running" (``desired: running``) includes a job backing off after a crash: it
is still in the blast radius, and the recovery waits for it. A fault acting on jobs
(``driver_kill``) acts on each; the probes sample each; the recovery waits for all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.exceptions import ChaosError

if TYPE_CHECKING:
    from workbench.client.rest import ServiceClient


def resolve(
    client: ServiceClient | None,
    radius: str,
    job: str | None,
    team: str | None = None,
    cluster: str | None = None,
) -> list[str]:
    """The jobs in the blast radius (ids as text, or the job's reference for ``job``),
    asking the job service for its jobs when the radius is a team or a cluster."""
    if radius == "job":
        return [job] if job else []
    if client is None:
        raise ChaosError(
            f"blast_radius '{radius}' is resolved through the job service: give chaos run "
            "--server and --token (or WORKBENCH_SERVER and WORKBENCH_TOKEN)."
        )
    return pick(client.list_jobs(team if radius == "team" else None), radius, job, team, cluster)


def pick(
    jobs: list[dict[str, Any]],
    radius: str,
    job: str | None,
    team: str | None = None,
    cluster: str | None = None,
) -> list[str]:
    """The jobs of ``jobs`` (the job service's views) in the blast radius."""
    if radius == "job":
        return [job] if job else []
    if radius == "team":
        if not team:
            raise ChaosError("blast_radius 'team' needs the scenario's 'team' key.")
        return _running([j for j in jobs if j.get("team") == team], f"team '{team}'")
    if not cluster:
        raise ChaosError("blast_radius 'cluster' needs the case's 'cluster' key (e.g. local).")
    return _running([j for j in jobs if j.get("cluster") == cluster], f"cluster '{cluster}'")


def _running(jobs: list[dict[str, Any]], what: str) -> list[str]:
    found = [str(j["id"]) for j in jobs if j.get("desired") == "running"]
    if not found:
        raise ChaosError(
            f"No job of the {what} should be running, so the blast radius is empty: start "
            "one (workbench jobs start JOB) or name another team or cluster."
        )
    return found
