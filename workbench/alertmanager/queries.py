"""What the job service answers about alerts: the alerts, a job's alert history, and the
silences, each checked against the caller's teams like jobs are (another team's alerts
are not listed; its job's history is a 404; its silences cannot be made or ended: 403).

:class:`AlertQueries` is mixed into :class:`~workbench.service.job_service.JobService`, so the
REST handlers and the CLI reach these as service operations.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.alertmanager import silences
from workbench.jobs import authz
from workbench.jobs.alert_tables import AlertEvent, AlertRow
from workbench.jobs.db import Database, Job
from workbench.jobs.views import iso


class AlertQueries:
    db: Database

    def _visible(self, s: Session, who: authz.Principal, ref: int | str) -> Job:
        raise NotImplementedError  # JobService's

    def list_alerts(
        self, who: authz.Principal, team: str | None = None, firing: bool = False
    ) -> list[dict]:
        """The alerts of the user's teams (of ``team``; only firing ones if ``firing``),
        firing first, newest first."""
        with self.db.session() as s:
            query = select(AlertRow, Job.name).join(Job, Job.id == AlertRow.job_id)
            if team:
                query = query.where(AlertRow.team == team)
            if firing:
                query = query.where(AlertRow.status == "firing")
            if not who.admin:
                query = query.where(AlertRow.team.in_(sorted(who.teams)))
            found = [(row, name) for row, name in s.execute(query)]
            muting: dict[str, list] = {}
            out = []
            for row, name in found:
                if row.team not in muting:
                    muting[row.team] = silences.active(s, row.team)
                out.append(alert_view(row, name, muting[row.team]))
        out.sort(key=lambda a: a["starts_at"] or "", reverse=True)
        out.sort(key=lambda a: a["status"] != "firing")
        return out

    def alert_history(self, who: authz.Principal, ref: int | str, last: int = 100) -> list[dict]:
        """The job's alert transitions, oldest first (the last ``last``)."""
        with self.db.session() as s:
            job = self._visible(s, who, ref)
            query = select(AlertEvent).where(AlertEvent.job_id == job.id)
            rows = list(s.scalars(query.order_by(AlertEvent.id.desc()).limit(max(last, 0))))
            return [alert_event_view(e, job.name) for e in reversed(rows)]

    def silence(
        self,
        who: authz.Principal,
        rule: str,
        labels: dict[str, str] | None = None,
        duration: str | int | float = "1h",
        comment: str = "",
        team: str | None = None,
    ) -> dict:
        """Mute ``rule``'s alerts (those whose labels match ``labels``) for ``duration``."""
        with self.db.session() as s:
            made = silences.create(
                s, who, rule=rule, labels=labels, duration=duration, comment=comment, team=team
            )
            return silences.silence_view(made)

    def list_silences(self, who: authz.Principal, expired: bool = False) -> list[dict]:
        with self.db.session() as s:
            return [silences.silence_view(x) for x in silences.listed(s, who, expired)]

    def get_silence(self, who: authz.Principal, ref: int | str) -> dict:
        with self.db.session() as s:
            return silences.silence_view(silences.find(s, who, ref))

    def unsilence(self, who: authz.Principal, ref: int | str) -> dict:
        """End the silence ``ref`` now."""
        with self.db.session() as s:
            return silences.silence_view(silences.expire(s, who, ref))


def alert_view(row: AlertRow, job: str, muting: list) -> dict[str, Any]:
    labels = json.loads(row.labels_json or "{}")
    silence = silences.silenced(muting, row.rule, {**labels, "job": job})
    return {
        "fingerprint": row.fingerprint,
        "job": job,
        "job_id": row.job_id,
        "team": row.team,
        "rule": row.rule,
        "labels": labels,
        "status": row.status,
        "starts_at": iso(row.starts_at),
        "ends_at": iso(row.ends_at),
        "values": json.loads(row.last_value_json or "{}"),
        "updated_at": iso(row.updated_at),
        "silenced_by": silence.id if silence is not None else None,
    }


def alert_event_view(event: AlertEvent, job: str) -> dict[str, Any]:
    return {
        "time": iso(event.at),
        "job": job,
        "rule": event.rule,
        "labels": json.loads(event.labels_json or "{}"),
        "status": event.status,
        "values": json.loads(event.values_json or "{}"),
        "fingerprint": event.fingerprint,
    }
