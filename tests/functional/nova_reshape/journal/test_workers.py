"""A revert over worker processes: the same outcome, in the journal's order."""

from __future__ import annotations

import functools
import io
import json
import signal

import pytest

from nova_reshape.cmd import manage
from nova_reshape.cmd.placement_db import open_database
from nova_reshape.exception import NovaException
from nova_reshape.journal import RunStatus, list_runs
from nova_reshape.journal.store import EntryKey, entry_keys
from nova_reshape.journal.workers import revert_in_workers
from placement_wsgi.db.database import Database
from tests.fixtures.killed_runs import (
    children,
    command,
    generate,
    start_revert,
    wait_until_reverting,
)
from tests.fixtures.placement_dump import normalized_dump


def _migrated(db_url, tmp_path, hosts):
    out, conf = generate(db_url, tmp_path, hosts=hosts, instances=4, kinds=())
    before = normalized_dump(db_url)
    assert manage.main(command(conf, out), out=io.StringIO(), err=io.StringIO()) == 0
    database = Database(db_url)
    try:
        run = list_runs(database.engine)[-1]
        keys = entry_keys(database.engine, run.id)
    finally:
        database.dispose()
    return conf, before, run.id, keys


def test_workers_plan_and_revert_every_node_in_the_journals_order(db_url, tmp_path):
    conf, before, run_id, keys = _migrated(db_url, tmp_path, hosts=5)
    opener = functools.partial(open_database, [conf])
    seen = []
    planned = revert_in_workers(opener, keys, run_id=None, workers=2, batch_size=2,
                                progress=lambda phase, done, total: seen.append(done))
    assert [result.nodename for result in planned] == [key.nodename for key in keys]
    assert {str(result.status) for result in planned} == {"would-revert"}
    assert seen == [5]  # one chunk
    out = io.StringIO()
    code = manage.main(["--config-file", conf, "placement", "revert", run_id, "--workers", "2",
                        "--format", "json"], out=out, err=io.StringIO())
    report = json.loads(out.getvalue())
    assert code == 0 and [node["status"] for node in report["nodes"]] == ["reverted"] * 5
    assert [node["changes"] for node in report["nodes"]] == [
        result.changes for result in planned]
    assert normalized_dump(db_url) == before


def test_sigterm_lets_each_worker_finish_its_node(db_url, tmp_path):
    # Enough nodes that each worker's share takes several transactions (up to
    # ten nodes each): with 16, one group per worker could end the run between
    # the first nodes put back and the signal.
    hosts = 48
    conf, _, run_id, _ = _migrated(db_url, tmp_path, hosts=hosts)
    process = start_revert(conf, run_id, "--workers", "2")
    wait_until_reverting(db_url, process, below=hosts * 4)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    left = children(db_url)
    assert left % 4 == 0 and left < hosts * 4
    database = Database(db_url)
    try:
        revert = list_runs(database.engine)[-1]
    finally:
        database.dispose()
    assert revert.status is RunStatus.INTERRUPTED and revert.changed == hosts - left // 4
    code = manage.main(["--config-file", conf, "placement", "revert", run_id],
                       out=io.StringIO(), err=io.StringIO())
    assert code == 0 and children(db_url) == 0


def test_a_worker_that_cannot_open_placement_is_one_error_not_a_hang(tmp_path):
    missing = functools.partial(open_database, [str(tmp_path / "absent.conf")])
    keys = [EntryKey(1, "cmp-0000", "cmp-0000")]
    with pytest.raises(NovaException, match="a revert worker failed: Refusal: configuration"):
        revert_in_workers(missing, keys, run_id=None, workers=2)
