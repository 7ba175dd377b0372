"""The migration's run in the journal: every node in its transaction, workers too."""

from __future__ import annotations

import io

import pytest

from nova_reshape.cmd import journaled, manage
from nova_reshape.cmd.refusal import Refusal
from nova_reshape.cmd.request import HostFiles, MigrateRequest, PlacementAccess
from nova_reshape.compute import writers
from nova_reshape.journal import RunStatus, entries, list_runs
from placement_wsgi.db.database import Database
from tests.fixtures.killed_runs import command, generate


def _runs(db_url: str):
    database = Database(db_url)
    try:
        return [(run, entries(database.engine, run.id)) for run in list_runs(database.engine)]
    finally:
        database.dispose()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_written_node_has_one_entry_whatever_the_workers(db_url, tmp_path, workers):
    out, conf = generate(db_url, tmp_path, hosts=4, instances=4, kinds=())
    code = manage.main(command(conf, out, "--workers", workers), out=io.StringIO(),
                       err=io.StringIO())
    assert code == 0
    [(run, nodes)] = _runs(db_url)
    assert run.status is RunStatus.OK and run.counts == {"migrated": 4}
    assert sorted(entry.nodename for entry in nodes) == [f"cmp-000{i}" for i in range(4)]
    assert all(len(entry.before.providers) == 1 and len(entry.after.providers) == 5
               for entry in nodes)
    assert "--workers" in run.command_line
    manage.main(command(conf, out), out=io.StringIO(), err=io.StringIO())
    (_, _), (again, none) = _runs(db_url)
    assert again.counts == {"unchanged": 4} and none == []


def test_nodes_written_together_have_each_their_entry(db_url, tmp_path):
    hosts = 2 * writers.TRANSACTIONS_PER_BATCH  # two nodes per transaction
    out, conf = generate(db_url, tmp_path, hosts=hosts, instances=2, kinds=())
    assert manage.main(command(conf, out), out=io.StringIO(), err=io.StringIO()) == 0
    [(run, nodes)] = _runs(db_url)
    assert run.counts == {"migrated": hosts}
    assert sorted(entry.nodename for entry in nodes) == [f"cmp-{i:04d}" for i in range(hosts)]
    assert all(len(entry.after.providers) == 5 for entry in nodes)


def test_a_dry_run_is_not_journaled_in_process_or_over_http():
    def opener():  # pragma: no cover - never opened
        raise AssertionError("nothing is opened for a run that is not journaled")

    hosts = HostFiles(("hosts",))
    for request in (MigrateRequest(PlacementAccess(config_files=("c",)), hosts, dry_run=True),
                    MigrateRequest(PlacementAccess(url="http://h"), hosts, dry_run=True)):
        with journaled.migration_run(opener, request, []) as run:
            assert run is None
        assert journaled.journal_path(request) is None
    journaled.finish(None, 0, [], io.StringIO())  # nothing to record


def test_a_run_over_http_is_journaled_in_a_file_and_only_it(tmp_path):
    hosts = HostFiles(("hosts",))
    report = str(tmp_path / "run.html")
    over_http = MigrateRequest(PlacementAccess(url="http://h"), hosts, report=report)
    assert journaled.journal_path(over_http) == str(tmp_path / "nova-reshape-journal.sqlite")
    named = MigrateRequest(PlacementAccess(url="http://h"), hosts,
                           journal=str(tmp_path / "j.sqlite"))
    assert journaled.journal_path(named) == str(tmp_path / "j.sqlite")
    assert list(tmp_path.iterdir()) == []  # checked, not created
    in_process = MigrateRequest(PlacementAccess(config_files=("c",)), hosts,
                                journal=str(tmp_path / "j.sqlite"))
    with pytest.raises(Refusal, match="--journal is for runs over --placement-url"):
        journaled.journal_path(in_process)


def test_the_inputs_keep_no_token():
    request = MigrateRequest(PlacementAccess(url="http://h", token="s3cret",
                                             headers=("X-A:b",)), HostFiles(("h.yaml",)))
    inputs = journaled.inputs_of(request)
    assert "s3cret" not in repr(inputs) and "X-A" not in repr(inputs)
    assert inputs["hosts"] == {"paths": ("h.yaml",)}
    assert journaled.STATUS_OF_EXIT[manage.EXIT_CONFLICT] is RunStatus.CONFLICT
