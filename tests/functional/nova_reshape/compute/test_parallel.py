"""``migrate_compute_inventory --workers N``: the run spread over worker processes.

On every enabled engine: the same outcome as one process, a refusal
anywhere stops every write, a worker that fails stops the rest, and a worker
that cannot reach the database ends the run with the command's one-line error.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys

from nova_reshape.cmd import manage
from nova_reshape.compute import migrate, parallel
from nova_reshape.virt.host import load_hosts
from placement_wsgi import errors
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import killed_runs
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.cmd.test_manage import (
    _children,
    _command,
    _generate,
    _main,
    wait_until_writing,
)


def _statuses(results):
    return {result.nodename: result.status for result in results}


def test_two_workers_migrate_everything_once(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=5, instances=6, ironic=1)
    code, text, err = _main(*_command(conf, out, "--workers", "2", "--format", "json"))
    assert code == manage.EXIT_OK, err
    report = json.loads(text)
    assert report["summary"] == {"migrated": 4, "skipped": 1}
    assert [node["nodename"] for node in report["nodes"]] == [
        f"cmp-{index:04d}" for index in range(5)]
    with PlacementDirect(make_conf(db_url)) as placement:
        expected = helpers.expected_totals(out)
        assert helpers.actual_totals(placement, expected) == expected
    code, text, _ = _main(*_command(conf, out, "--workers", "3"))
    assert code == manage.EXIT_OK
    assert text.rstrip().endswith("1 skipped, 4 unchanged. Done.")


def test_a_refusal_in_one_share_stops_every_worker(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=4, instances=4)
    path = os.path.join(out, "cmp-0003.yaml")  # the second worker's share
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(text.replace("capacity: 1\n", "capacity: 0\n", 1))
    code, text, _ = _main(*_command(conf, out, "--workers", "2"))
    assert code == manage.EXIT_REFUSED
    assert "cmp-0000: not-run" in text and "cmp-0003: refused" in text
    assert _children(db_url) == 0


@contextlib.contextmanager
def _open_failing_at_reshape(config_files, failing_node_root):
    """The database transport, whose write of one node's tree fails inside Placement."""
    with manage.open_database(config_files) as placement:
        apply_tree_change = placement.apply_tree_change

        def failing_apply(change, check=None):
            if failing_node_root in change.inventories:
                raise errors.InternalError("injected failure")
            return apply_tree_change(change, check)

        placement.apply_tree_change = failing_apply
        yield placement


def test_a_failing_worker_stops_its_share_and_the_run_fails(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=4, instances=2)
    failing = helpers.generator.stable_uuid(0, "cmp-0000")  # first node of share 1
    run = parallel.ParallelMigration(
        functools.partial(_open_failing_at_reshape, [conf], failing),
        load_hosts([out]), workers=2)
    statuses = _statuses(run.run())
    assert statuses["cmp-0000"] == migrate.FAILED
    assert statuses["cmp-0002"] == migrate.NOT_RUN  # after the failure, same worker
    assert set(statuses.values()) <= {migrate.FAILED, migrate.NOT_RUN, migrate.MIGRATED}
    # Running again (the reshape no longer fails) completes every node.
    code, _, err = _main(*_command(conf, out, "--workers", "2"))
    assert code == manage.EXIT_OK, err
    with PlacementDirect(make_conf(db_url)) as placement:
        expected = helpers.expected_totals(out)
        assert helpers.actual_totals(placement, expected) == expected


def test_a_database_no_worker_could_open_is_one_line_before_any_starts(db_url, tmp_path):
    out, _ = _generate(db_url, tmp_path, hosts=2, instances=1)
    conf = tmp_path / "gone.conf"
    conf.write_text(f"[placement_database]\nconnection = sqlite:///{tmp_path}/no/such.db\n")
    code, _, err = _main(*_command(str(conf), out, "--workers", "2"))
    assert code == manage.EXIT_BAD_INPUT
    assert err.startswith("nova-reshape-manage: error: ") and err.count("\n") == 1, err
    assert f"the directory {tmp_path}/no does not exist" in err


def test_parent_killed_mid_run_workers_stop_and_a_rerun_completes(db_url, tmp_path):
    hosts = 40
    out, conf = _generate(db_url, tmp_path, hosts=hosts, instances=8, kinds=())
    process = subprocess.Popen(
        [sys.executable, "-m", "nova_reshape.cmd.manage",
         *_command(conf, out, "--workers", "2")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    group = process.pid
    try:
        wait_until_writing(db_url, process)
        process.send_signal(signal.SIGKILL)  # the parent only, as the OOM killer would
        process.wait(30)
        assert killed_runs.group_gone(group), "workers went on after their parent died"
    finally:
        killed_runs.kill_group(group)
    assert 0 < _children(db_url) < hosts * 4, "the kill did not land mid-run"
    code, text, err = _main(*_command(conf, out, "--workers", "2"))
    assert code == manage.EXIT_OK, (text, err)
    killed_runs.assert_all_migrated(db_url, out, hosts)


def test_workers_get_the_run_options(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=2, instances=4)
    nova_conf = tmp_path / "nova.conf"
    nova_conf.write_text("[pci]\nreport_in_placement = False\n")
    code, text, err = _main(*_command(conf, out, "--workers", "2", "--dry-run",
                                      "--numa-in-placement", "--format", "json"))
    assert code == manage.EXIT_OK, err
    assert err.count("--numa-in-placement") == 1  # once per run, not per worker
    targets = {move["target_name"] for node in json.loads(text)["nodes"]
               for move in node["moves"]}
    # A dry run's nodes stay as checked in every worker (not "not-run").
    assert {node["status"] for node in json.loads(text)["nodes"]} == {"would-migrate"}
    assert {"cmp-0000_NUMA0", "cmp-0001_NUMA0"} <= targets
    code, text, _ = _main(*_command(conf, out, "--workers", "2", "--nova-config",
                                    str(nova_conf)))
    assert code == manage.EXIT_REFUSED and _children(db_url) == 0
    assert text.count("report_in_placement is false") == 2
