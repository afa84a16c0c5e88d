"""Who may see and act on which jobs: the teams file and the decisions taken from it.

Teams file (YAML)::

    admins: [alice]
    teams:
      pricing: [bob, carol]
      supply: [dave]
    viewers:                   # dashboard viewers: user -> service areas (cities)
      carla: [bandung]
      dina: [jakarta, surabaya]

Deny by default: a user sees and acts on the jobs of their own teams only; a job of
another team answers :class:`JobNotFoundError` to reads and actions alike (404, the same
answer as for no job: neither its name nor its team leaks; the exception's ``denied``
says why, for the audit trail); a submission for a team one is not in is
:class:`JobForbiddenError` (403), for a team the file does not hold
:class:`TeamNotFoundError`; admins see and act on everything. Without a
teams file the service is in single-user mode: every authenticated user is an admin.

A viewer (``viewers:``, areas being keys of ``workbench/data/service_areas.yaml``) sees
the city dashboard for those areas and nothing else: the job service answers 403 to a
viewer for every route (:func:`check_not_viewer`). A viewer is in no team and no admin.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from pathlib import Path

from workbench.atlas.areas import service_areas
from workbench.exceptions import (
    JobForbiddenError,
    JobNotFoundError,
    SpecError,
    TeamNotFoundError,
    ViewerForbiddenError,
)
from workbench.yamlsafe import read_yaml

TOP_KEYS = {"admins", "teams", "viewers"}


@dataclass(frozen=True)
class Principal:
    """A user, their teams, whether an admin; ``areas``: the service areas of a dashboard
    viewer (None for everyone else, who sees every area)."""

    user: str
    teams: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False
    areas: frozenset[str] | None = None

    @property
    def viewer(self) -> bool:
        return self.areas is not None

    def to_dict(self) -> dict:
        data = {"user": self.user, "teams": sorted(self.teams), "admin": self.admin}
        return data | ({"areas": sorted(self.areas)} if self.areas is not None else {})


@dataclass(frozen=True)
class Teams:
    """The teams file's content; ``None`` for single-user mode."""

    admins: frozenset[str]
    members: dict[str, frozenset[str]]
    viewers: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None) -> Teams | None:
        if path is None:
            return None

        data = read_yaml(path, what="teams file") or {}
        if not isinstance(data, dict) or not set(data) <= TOP_KEYS:
            raise SpecError(
                "(top)",
                "expected {admins: [user...], teams: {team: [user...]}, "
                "viewers: {user: [area...]}}",
                str(path),
            )
        teams = data.get("teams") or {}
        if not isinstance(teams, dict):
            raise SpecError("teams", "expected a mapping {team: [user...]}", str(path))
        members = {str(t): frozenset(map(str, users or [])) for t, users in teams.items()}
        admins = frozenset(map(str, data.get("admins") or []))
        viewers = _viewers(data.get("viewers") or {}, str(path))
        both = sorted(set(viewers) & (admins | set().union(*members.values())))
        if both:
            raise SpecError(
                "viewers",
                f"{both} are also admins or team members: a viewer sees only dashboards; "
                "list each user either as a viewer or in admins/teams",
                str(path),
            )
        return cls(admins, members, viewers)

    def principal(self, user: str) -> Principal:
        if user in self.viewers:
            return Principal(user, areas=self.viewers[user])
        teams = frozenset(t for t, users in self.members.items() if user in users)
        return Principal(user, teams, user in self.admins)


def _viewers(data: object, source: str) -> dict[str, frozenset[str]]:
    """``{user: [area...]}`` checked against the known service areas."""

    if not isinstance(data, dict):
        raise SpecError("viewers", "expected a mapping {user: [area...]}", source)
    known = service_areas()
    out = {}
    for user, areas in data.items():
        names = [areas] if isinstance(areas, str) else list(areas or [])
        unknown = sorted(str(a) for a in names if str(a) not in known)
        if unknown or not names:
            what = f"unknown service areas {unknown}" if unknown else "no service area"
            raise SpecError(
                f"viewers.{user}",
                f"{what}: the known areas are {sorted(known)} (workbench/data/service_areas.yaml)",
                source,
            )
        out[str(user)] = frozenset(map(str, names))
    return out


def principal(teams: Teams | None, user: str | None) -> Principal:
    """The principal for ``user`` (None: the local OS user, as the embedded service runs)."""
    name = user or getpass.getuser()
    if teams is None:
        return Principal(name, frozenset(), admin=True)
    return teams.principal(name)


def can_see(who: Principal, team: str) -> bool:
    return who.admin or team in who.teams


def check_not_viewer(who: Principal) -> None:
    """Anything of the job service: a dashboard viewer is refused (403)."""
    if who.viewer:
        raise ViewerForbiddenError(who.user, who.areas or ())


def check_read(who: Principal, team: str, ref: object, what: str = "read") -> None:
    """A read of (or an action on, ``what``) a job of ``team``: another team's job is
    reported as not found."""
    if not can_see(who, team):
        mine = ", ".join(sorted(who.teams)) or "no team"
        raise JobNotFoundError(
            ref, denied=f"{what} job '{ref}' of team '{team}' by '{who.user}' (teams: {mine})"
        )


def check_team(teams: Teams | None, who: Principal, team: str, what: str) -> None:
    """Work for ``team`` (``what``, e.g. "submit a job"): a team the teams file lacks is
    named with the caller's teams; one the caller is not in is refused."""
    if teams is not None and team not in teams.members:
        known = teams.members if who.admin else who.teams
        raise TeamNotFoundError(team, known, admin=who.admin)
    check_act(who, team, f"{what} for team '{team}'")


def check_act(who: Principal, team: str, what: str) -> None:
    """An action (``what``, e.g. "stop job 'x'") on a job of ``team``."""
    if not can_see(who, team):
        raise JobForbiddenError(who.user, who.teams, what, team)
