"""Teams and decisions: deny by default, 404 for reads and 403 for actions, admins."""

from __future__ import annotations

import pytest
from jobkit import teams_file

from workbench.exceptions import JobForbiddenError, JobNotFoundError, SpecError
from workbench.jobs import authz

pytestmark = pytest.mark.unit


@pytest.fixture
def teams(tmp_path):
    return authz.Teams.load(teams_file(tmp_path))


def test_principals_from_the_teams_file(teams):
    assert authz.principal(teams, "bob") == authz.Principal("bob", frozenset({"pricing"}))
    assert authz.principal(teams, "root").admin
    assert authz.principal(teams, "mallory") == authz.Principal("mallory")


def test_reads_of_another_team_are_not_found_and_actions_forbidden(teams):
    dave = authz.principal(teams, "dave")
    authz.check_read(dave, "supply", "x")
    with pytest.raises(JobNotFoundError) as read:
        authz.check_read(dave, "pricing", "surge")
    assert read.value.status == 404 and "workbench jobs list" in str(read.value)
    with pytest.raises(JobForbiddenError) as act:
        authz.check_act(dave, "pricing", "stop job 'surge'")
    assert act.value.status == 403
    assert "'dave' (teams: supply) may not stop job 'surge'" in str(act.value)
    assert "Ask an admin to add you to team 'pricing'" in str(act.value)


def test_a_user_in_no_team_may_do_nothing_and_admins_everything(teams):
    nobody = authz.principal(teams, "mallory")
    assert not authz.can_see(nobody, "pricing")
    with pytest.raises(JobForbiddenError, match=r"teams: no team"):
        authz.check_act(nobody, "supply", "submit a job for team 'supply'")
    root = authz.principal(teams, "root")
    authz.check_act(root, "supply", "stop")
    authz.check_read(root, "pricing", "x")


def test_single_user_mode_without_a_teams_file():
    assert authz.Teams.load(None) is None
    assert authz.principal(None, "anyone").admin
    assert authz.principal(None, None).user  # the local OS user


def test_a_malformed_teams_file_says_what_is_expected(tmp_path):
    path = tmp_path / "teams.yaml"
    path.write_text("members: [bob]\n")
    with pytest.raises(SpecError, match=r"expected \{admins"):
        authz.Teams.load(path)
