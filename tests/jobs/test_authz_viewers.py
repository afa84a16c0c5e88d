"""The teams file's dashboard viewers: their areas, checked against the service areas; a
viewer is refused everything of the job service."""

from __future__ import annotations

import pytest

from workbench.exceptions import SpecError, ViewerForbiddenError
from workbench.jobs import authz

pytestmark = pytest.mark.unit

TEAMS = """admins: [root]
teams: {pricing: [alice], supply: [bob]}
viewers: {carla: [bandung], dina: [jakarta, surabaya]}
"""


def load(tmp_path, text: str) -> authz.Teams | None:
    path = tmp_path / "teams.yaml"
    path.write_text(text)
    return authz.Teams.load(path)


def test_viewers_have_areas_and_no_team(tmp_path):
    teams = load(tmp_path, TEAMS)
    carla = authz.principal(teams, "carla")
    assert carla == authz.Principal("carla", areas=frozenset({"bandung"}))
    assert carla.viewer and not carla.admin and not carla.teams
    assert authz.principal(teams, "dina").areas == {"jakarta", "surabaya"}
    assert carla.to_dict() == {"user": "carla", "teams": [], "admin": False, "areas": ["bandung"]}
    alice = authz.principal(teams, "alice")
    assert not alice.viewer and alice.areas is None and "areas" not in alice.to_dict()
    assert not authz.can_see(carla, "pricing")


def test_a_viewer_is_refused_the_job_service(tmp_path):
    teams = load(tmp_path, TEAMS)
    authz.check_not_viewer(authz.principal(teams, "alice"))
    authz.check_not_viewer(authz.principal(None, "anyone"))  # single-user mode
    with pytest.raises(ViewerForbiddenError) as refused:
        authz.check_not_viewer(authz.principal(teams, "dina"))
    assert refused.value.status == 403
    assert "'dina' is a dashboard viewer (areas: jakarta, surabaya)" in str(refused.value)


def test_unknown_areas_list_the_known_ones(tmp_path):
    with pytest.raises(SpecError) as bad:
        load(tmp_path, "viewers: {carla: [bandung, medan]}\n")
    message = str(bad.value)
    assert "viewers.carla" in message and "unknown service areas ['medan']" in message
    assert "['bandung', 'jakarta', 'surabaya']" in message
    with pytest.raises(SpecError, match="no service area"):
        load(tmp_path, "viewers: {carla: []}\n")
    with pytest.raises(SpecError, match=r"expected a mapping \{user: \[area"):
        load(tmp_path, "viewers: [carla]\n")


def test_a_viewer_is_not_also_a_member_or_admin(tmp_path):
    with pytest.raises(SpecError, match=r"\['alice'\] are also admins or team members"):
        load(tmp_path, "teams: {pricing: [alice]}\nviewers: {alice: [jakarta]}\n")
    assert load(tmp_path, "viewers: {carla: bandung}\n").viewers == {"carla": {"bandung"}}
