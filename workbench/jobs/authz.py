"""Who may see and act on which jobs: the teams file and the decisions taken from it.

Teams file (YAML)::

    admins: [alice]
    teams:
      pricing: [bob, carol]
      supply: [dave]

Deny by default: a user sees and acts on the jobs of their own teams only; a job of
another team answers :class:`JobNotFoundError` to reads (404, its name does not leak) and
:class:`JobForbiddenError` to actions (403); admins see and act on everything. Without a
teams file the service is in single-user mode: every authenticated user is an admin.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from pathlib import Path

from workbench.exceptions import JobForbiddenError, JobNotFoundError, SpecError


@dataclass(frozen=True)
class Principal:
    user: str
    teams: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False

    def to_dict(self) -> dict:
        return {"user": self.user, "teams": sorted(self.teams), "admin": self.admin}


@dataclass(frozen=True)
class Teams:
    """The teams file's content; ``None`` for single-user mode."""

    admins: frozenset[str]
    members: dict[str, frozenset[str]]

    @classmethod
    def load(cls, path: Path | None) -> Teams | None:
        if path is None:
            return None
        from workbench.yamlsafe import read_yaml

        data = read_yaml(path, what="teams file") or {}
        if not isinstance(data, dict) or not set(data) <= {"admins", "teams"}:
            raise SpecError(
                "(top)", "expected {admins: [user...], teams: {team: [user...]}}", str(path)
            )
        teams = data.get("teams") or {}
        if not isinstance(teams, dict):
            raise SpecError("teams", "expected a mapping {team: [user...]}", str(path))
        members = {str(t): frozenset(map(str, users or [])) for t, users in teams.items()}
        return cls(frozenset(map(str, data.get("admins") or [])), members)

    def principal(self, user: str) -> Principal:
        teams = frozenset(t for t, users in self.members.items() if user in users)
        return Principal(user, teams, user in self.admins)


def principal(teams: Teams | None, user: str | None) -> Principal:
    """The principal for ``user`` (None: the local OS user, as the embedded service runs)."""
    name = user or getpass.getuser()
    if teams is None:
        return Principal(name, frozenset(), admin=True)
    return teams.principal(name)


def can_see(who: Principal, team: str) -> bool:
    return who.admin or team in who.teams


def check_read(who: Principal, team: str, ref: object) -> None:
    """A read of a job of ``team``: another team's job is reported as not found."""
    if not can_see(who, team):
        raise JobNotFoundError(ref)


def check_act(who: Principal, team: str, what: str) -> None:
    """An action (``what``, e.g. "stop job 'x'") on a job of ``team``."""
    if not can_see(who, team):
        raise JobForbiddenError(who.user, who.teams, what, team)
