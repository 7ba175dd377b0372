"""A journaled run from start to end, and the command line it keeps."""

from __future__ import annotations

import contextlib

import pytest

from nova_reshape import journal
from nova_reshape.journal.recorder import command_line


def test_secrets_never_reach_the_journal():
    line = command_line(["placement", "migrate_compute_inventory", "--placement-url",
                         "http://h:8778", "--token", "s3cret", "--header", "X-Auth:abc",
                         "--nova-database", "mysql+pymysql://nova:pw@db/nova"])
    assert "s3cret" not in line and "abc" not in line and ":pw@" not in line
    assert "--token '***'" in line and "mysql+pymysql://nova:***@db/nova" in line


@pytest.mark.parametrize(("raised", "status"), [
    (None, journal.RunStatus.OK), (KeyboardInterrupt, journal.RunStatus.INTERRUPTED),
    (RuntimeError, journal.RunStatus.FAILED)])
def test_a_run_ends_with_the_status_of_its_block(database, raised, status):
    with pytest.raises(raised) if raised else contextlib.nullcontext():
        with journal.recording(database.engine, "heal", "heal --all", {}) as run:
            run.counts["unchanged"] += 2
            if raised:
                raise raised()
    [recorded] = journal.list_runs(database.engine)
    assert recorded.id == run.run_id and recorded.status is status
    assert recorded.counts == {"unchanged": 2}


def test_a_status_said_first_is_kept(database):
    with journal.recording(database.engine, "sync_aggregates", "sync", {}) as run:
        run.finish(journal.RunStatus.CONFLICT, {"conflict": 1})
    assert journal.get_run(database.engine, run.run_id).status is journal.RunStatus.CONFLICT

