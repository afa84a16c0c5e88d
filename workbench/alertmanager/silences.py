"""Silences: a team mutes one rule's alerts, all of them or those whose labels match,
until a time, with an author and a comment saying why.

A silence matches an alert of its team whose rule is the silence's rule and whose labels
(plus ``job``, the job's name) contain every ``matchers`` pair. The dispatcher does not
send a matching notification (its outbox row becomes ``silenced``); an alert still firing
when the silence ends (expiry or ``unsilence``) is notified then.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.durations import to_millis
from workbench.exceptions import JobServiceError, SilenceNotFoundError, clip
from workbench.jobs import authz
from workbench.jobs.alert_tables import Silence
from workbench.jobs.db import now
from workbench.jobs.views import iso

MAX_SILENCE = timedelta(days=90)


def create(
    s: Session,
    who: authz.Principal,
    *,
    rule: str,
    labels: dict[str, str] | None,
    duration: str | int | float,
    comment: str,
    team: str | None = None,
) -> Silence:
    """A new silence of ``team`` (the user's only team by default)."""
    team = team_of(who, team)
    authz.check_act(who, team, f"silence alerts of team '{team}'")
    if not str(comment or "").strip():
        raise JobServiceError("A silence needs a comment saying why (--comment TEXT).")
    if not str(rule or "").strip():
        raise JobServiceError("A silence needs the name of the rule it mutes.")
    silence = Silence(
        team=team,
        rule=str(rule),
        matchers_json=json.dumps(_matchers(labels), sort_keys=True),
        until=now() + _length(duration),
        author=who.user,
        comment=str(comment),
    )
    s.add(silence)
    s.flush()
    return silence


def team_of(who: authz.Principal, team: str | None) -> str:
    """``team``, or the user's only team when not given."""
    if team:
        return str(team)
    if len(who.teams) == 1:
        return next(iter(who.teams))
    mine = ", ".join(sorted(who.teams)) or "none"
    raise JobServiceError(f"Say which team the silence is for (--team TEAM); your teams: {mine}.")


def _length(duration: str | int | float) -> timedelta:
    try:
        millis = to_millis(duration)
    except ValueError as err:
        raise JobServiceError(f"A silence's length: {err}.") from None
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        millis = int(float(duration) * 1000)  # a bare number in the API means seconds
    length = timedelta(milliseconds=millis)
    if not timedelta(0) < length <= MAX_SILENCE:
        raise JobServiceError(
            f"A silence lasts more than 0 and at most {MAX_SILENCE.days} days; got "
            f"{clip(duration)}."
        )
    return length


def _matchers(labels: dict[str, str] | None) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise JobServiceError("A silence's labels are a mapping {label: value}.")
    return {str(k): str(v) for k, v in labels.items()}


def find(s: Session, who: authz.Principal, ref: int | str) -> Silence:
    """The silence ``ref`` of one of the user's teams (else SilenceNotFoundError)."""
    silence = _get(s, ref)
    if silence is None:
        raise SilenceNotFoundError(ref)
    if not authz.can_see(who, silence.team):
        denied = f"silence {ref} of team '{silence.team}' by '{who.user}'"
        raise SilenceNotFoundError(ref, denied=denied)
    return silence


def _get(s: Session, ref: int | str) -> Silence | None:
    return s.get(Silence, int(ref)) if str(ref).isdigit() and int(ref) < 2**63 else None


def expire(s: Session, who: authz.Principal, ref: int | str) -> Silence:
    """End the silence ``ref`` now (it stays listed as expired); another team's: 404."""
    silence = find(s, who, ref)
    silence.until = min(silence.until, now())
    return silence


def listed(s: Session, who: authz.Principal, expired: bool = False) -> list[Silence]:
    """The silences of the user's teams (active ones unless ``expired``), newest first."""
    query = select(Silence).order_by(Silence.id.desc())
    if not expired:
        query = query.where(Silence.until > now())
    return [x for x in s.scalars(query) if authz.can_see(who, x.team)]


def active(s: Session, team: str, at: datetime | None = None) -> list[Silence]:
    """The team's silences in force at ``at`` (now)."""
    query = select(Silence).where(Silence.team == team, Silence.until > (at or now()))
    return list(s.scalars(query))


def matches(silence: Silence, rule: str, labels: dict[str, str]) -> bool:
    if silence.rule != rule:
        return False
    wanted = json.loads(silence.matchers_json or "{}")
    return all(str(labels.get(k)) == v for k, v in wanted.items())


def silenced(silences: list[Silence], rule: str, labels: dict[str, str]) -> Silence | None:
    """The first of ``silences`` muting ``rule`` with ``labels``, or None."""
    return next((x for x in silences if matches(x, rule, labels)), None)


def silence_view(silence: Silence) -> dict:
    return {
        "id": silence.id,
        "team": silence.team,
        "rule": silence.rule,
        "labels": json.loads(silence.matchers_json or "{}"),
        "until": iso(silence.until),
        "author": silence.author,
        "comment": silence.comment,
        "created_at": iso(silence.created_at),
        "active": silence.until > now(),
    }
