"""A job's alert rules and notifiers as the job service uses them: parsed from the job's
current version's spec (once per version) and the team-wide notifiers of ``service.yaml``.

A notifier named in a rule's ``notify`` is looked up in the spec's ``notifiers`` first,
then in the service config's ``notifiers[team]``. The config is returned as written
(secret references unresolved); :func:`workbench.notify.registry.deliver` resolves them
for each send.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from workbench.alerts.rules import AlertRule, in_job, in_service
from workbench.jobs import versioning
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Job

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobRules:
    """The alert rules and spec notifiers of one version of one job."""

    job_id: int
    job: str
    team: str
    version: int
    rules: tuple[AlertRule, ...] = ()
    notifiers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def rule(self, name: str) -> AlertRule | None:
        return next((r for r in self.rules if r.name == name), None)

    @property
    def metric(self) -> list[AlertRule]:
        """The rules the job evaluates (their observations come from its runs)."""
        return in_job(self.rules)

    @property
    def health(self) -> list[AlertRule]:
        """The rules the service evaluates, from the job's status and heartbeat."""
        return in_service(self.rules)


class RuleBook:
    """Parsed rules per (job, version), shared by the supervisor and dispatcher threads."""

    def __init__(self, config: ServiceConfig):
        self.config = config
        self._cache: dict[tuple[int, int], JobRules] = {}
        self._lock = threading.Lock()

    def of(self, s: Session, job: Job) -> JobRules:
        key = (job.id, job.current_version)
        with self._lock:
            found = self._cache.get(key)
        if found is None:
            found = self._parse(s, job)
            with self._lock:
                self._cache = {k: v for k, v in self._cache.items() if k[0] != job.id}
                self._cache[key] = found
        return found

    def _parse(self, s: Session, job: Job) -> JobRules:
        empty = JobRules(job.id, job.name, job.team, job.current_version)
        record = versioning.version(s, job.id, job.current_version)
        if record is None:
            return empty
        try:
            spec = versioning.parse_spec(record.spec_yaml)
        except Exception:  # it was valid at submit; a newer release may disagree
            LOG.exception("the spec of %s v%s: no alert rules", job.name, job.current_version)
            return empty
        return JobRules(
            job.id,
            job.name,
            job.team,
            job.current_version,
            tuple(spec.alerts),
            dict(spec.notifiers),
        )

    def receiver(self, rules: JobRules, name: str) -> dict[str, Any] | None:
        """The config of the notifier ``name`` for the job (spec first, then its team's)."""
        if name in rules.notifiers:
            return dict(rules.notifiers[name])
        team = self.config.notifiers.get(rules.team) or {}
        return dict(team[name]) if name in team else None

    def receivers(self, rules: JobRules) -> list[str]:
        """Every notifier name the job can use (for error messages)."""
        return sorted({*rules.notifiers, *(self.config.notifiers.get(rules.team) or {})})
