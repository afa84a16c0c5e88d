"""The alert tables (migration 0003) and silences on SQLite and PostgreSQL: who may make,
see and end them; which alerts they mute."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from workbench.alertmanager import silences
from workbench.exceptions import JobForbiddenError, JobServiceError, SilenceNotFoundError
from workbench.jobs import authz
from workbench.jobs.alert_tables import Silence
from workbench.jobs.db import migrate, open_database

pytestmark = pytest.mark.unit

BOB = authz.Principal("bob", frozenset({"pricing"}))
DAVE = authz.Principal("dave", frozenset({"supply"}))
ROOT = authz.Principal("root", frozenset(), admin=True)


@pytest.fixture
def db(database_url):
    db = open_database(database_url)
    yield db
    db.dispose()


def test_migration_0003_makes_the_alert_tables(db):
    migrate(db.engine)  # at head already: nothing to do
    tables = set(sa.inspect(db.engine).get_table_names())
    assert {"alerts", "alert_events", "alert_cursors", "silences", "outbox"} <= tables
    columns = {c["name"] for c in sa.inspect(db.engine).get_columns("outbox")}
    assert {"receiver", "payload_json", "status", "attempts", "next_attempt_at"} <= columns


def test_a_silence_of_my_team_mutes_matching_alerts_until_it_ends(db):
    with db.session() as s:
        made = silences.create(
            s, BOB, rule="hot", labels={"cell": "7"}, duration="2h", comment="roadworks"
        )
        view = silences.silence_view(made)
    assert (view["team"], view["author"], view["labels"], view["active"]) == (
        "pricing", "bob", {"cell": "7"}, True
    )  # fmt: skip
    with db.session() as s:
        active = silences.active(s, "pricing")
        assert silences.silenced(active, "hot", {"cell": "7", "job": "surge"}) is not None
        assert silences.silenced(active, "hot", {"cell": "8"}) is None
        assert silences.silenced(active, "cold", {"cell": "7"}) is None
        assert silences.active(s, "supply") == []
        assert [x.id for x in silences.listed(s, BOB)] == [view["id"]]
        assert silences.listed(s, DAVE) == []
    with db.session() as s:
        with pytest.raises(SilenceNotFoundError, match="that you can see"):  # as a read
            silences.expire(s, DAVE, view["id"])
        silences.expire(s, BOB, view["id"])
    with db.session() as s:
        assert silences.active(s, "pricing") == [] and silences.listed(s, BOB) == []
        assert [x.id for x in silences.listed(s, BOB, expired=True)] == [view["id"]]


def test_a_silence_expires_by_itself(db):
    with db.session() as s:
        silences.create(s, BOB, rule="hot", labels=None, duration="1s", comment="short")
    with db.session() as s:
        assert len(silences.active(s, "pricing")) == 1
    time.sleep(1.2)
    with db.session() as s:
        assert silences.active(s, "pricing") == []


def test_refused_silences_say_what_to_do(db):
    with db.session() as s:
        with pytest.raises(JobForbiddenError, match="may not silence alerts of team 'pricing'"):
            silences.create(s, DAVE, rule="hot", labels={}, duration="1h", comment="x",
                            team="pricing")  # fmt: skip
        with pytest.raises(JobServiceError, match="--team TEAM"):
            silences.create(s, ROOT, rule="hot", labels={}, duration="1h", comment="x")
        with pytest.raises(JobServiceError, match="needs a comment"):
            silences.create(s, BOB, rule="hot", labels={}, duration="1h", comment=" ")
        with pytest.raises(JobServiceError, match="is not a duration"):
            silences.create(s, BOB, rule="hot", labels={}, duration="soon", comment="x")
        with pytest.raises(JobServiceError, match="at most 90 days"):
            silences.create(s, BOB, rule="hot", labels={}, duration="1000d", comment="x")
        with pytest.raises(SilenceNotFoundError):
            silences.expire(s, BOB, 12345)
        made = silences.create(s, ROOT, rule="hot", labels={}, duration=60, comment="x",
                               team="supply")  # fmt: skip
        assert isinstance(made, Silence) and made.team == "supply"
