"""The named Spark clusters as the API shows them (``GET clusters``, ``GET clusters/NAME``,
``workbench clusters list|show``): a team sees the clusters it may use, an admin all.

A cluster's view: name, master, teams (null: every team), jobs_per_app, resources,
standby, unreachable_after_s, description, ``conf`` with the values of secret-looking keys
(password, secret, token, credential, key) masked, ``answering`` (whether the master
accepted connections at its last probe, at most 5 s old and shared with the supervisor's
probes; null for masters that are not probed: ``local[N]``, ``yarn``) and
``jobs``: how many of the caller's jobs run on it.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from workbench.exceptions import ClusterNotFoundError
from workbench.jobs import authz
from workbench.jobs.config import Cluster, ServiceConfig
from workbench.jobs.db import Job
from workbench.jobs.reschedule import PROBES

_SECRET = re.compile(r"pass|secret|token|credential|\.key$|keytab", re.IGNORECASE)
MASK = "****"


def visible(config: ServiceConfig, who: authz.Principal) -> list[str]:
    """The clusters ``who`` may see: those any of their teams may use (admins: all)."""
    return [
        name
        for name, cluster in config.clusters.items()
        if who.admin or any(cluster.may_use(team) for team in who.teams)
    ]


def cluster_view(
    s: Session, who: authz.Principal, name: str, cluster: Cluster, answering: bool | None
) -> dict[str, Any]:
    query = select(func.count()).select_from(Job).where(Job.cluster == name)
    query = query.where(Job.desired != "deleted")  # a deleted job's row stays for the audit
    if not who.admin:
        query = query.where(Job.team.in_(sorted(who.teams)))
    return {
        "name": name,
        "master": cluster.master,
        "teams": cluster.teams,
        "jobs_per_app": cluster.jobs_per_app,
        "resources": cluster.resources.model_dump(),
        "conf": {k: MASK if _SECRET.search(k) else v for k, v in cluster.conf.items()},
        "standby": cluster.standby,
        "unreachable_after_s": cluster.unreachable_after_s,
        "description": cluster.description,
        "answering": answering,
        "jobs": int(s.scalar(query) or 0),
    }


def list_clusters(s: Session, config: ServiceConfig, who: authz.Principal) -> list[dict]:
    names = visible(config, who)
    answering = PROBES.answering(config.clusters[n].master for n in names)
    return [
        cluster_view(s, who, n, config.clusters[n], answering[config.clusters[n].master])
        for n in names
    ]


def get_cluster(s: Session, config: ServiceConfig, who: authz.Principal, name: str) -> dict:
    known = visible(config, who)
    if name not in known:
        raise ClusterNotFoundError(name, known)
    master = config.clusters[name].master
    return cluster_view(s, who, name, config.clusters[name], PROBES.answering([master])[master])
