"""Migrate a mixed cloud, then put it back: on every engine, through the command.

The cloud has every kind the migration reshapes (VGPU, PCPU from pre-Train
pinning, NUMA cells, PCI devices, Cyborg accelerators) and a disabled
host. What a revert must give is checked on a normalized dump of every
Placement table (tests/fixtures/placement_dump.py), never through the
journal's own code.
"""

from __future__ import annotations

import io
import json
import os
import signal

import pytest
import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.journal import schema
from nova_reshape.journal.revert import Reverter
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import tree_change
from tests.fixtures.config import make_conf
from tests.fixtures.http_journal import MIXED
from tests.fixtures.killed_runs import children, generate, start_revert, wait_until_reverting
from tests.fixtures.killed_runs import command as migrate_command
from tests.fixtures.placement_dump import normalized_dump
from tests.functional.nova_reshape import migrate_helpers as helpers

HOSTS = 3
HOST_FILES = ""


def _consumer_of(host: str) -> str:
    """The first consumer the host file of ``host`` lists."""
    for document in helpers.read_documents(HOST_FILES):
        for node in document["nodes"]:
            if node["nodename"] == host:
                return node["consumers"][0]["uuid"]
    raise AssertionError(f"no host {host}")


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _migrated(db_url, tmp_path, hosts=HOSTS):
    """A mixed flat cloud, its dump, then migrated: (conf, dump before, run id)."""
    global HOST_FILES  # noqa: PLW0603 - the last generated cloud's host files
    out, conf = generate(db_url, tmp_path, hosts=hosts, gpus=2, instances=8, kinds=MIXED)
    HOST_FILES = out
    before = normalized_dump(db_url)
    code, text, err = _main(*migrate_command(conf, out, "--numa-in-placement"))
    assert code == 0, (text, err)
    assert normalized_dump(db_url) != before
    return conf, before, _last_run(conf)


def _last_run(conf: str) -> str:
    code, text, _ = _main("--config-file", conf, "placement", "runs", "--format", "json")
    assert code == 0
    return json.loads(text)[-1]["id"]


def _revert(conf: str, run_id: str, *extra: str) -> tuple[int, dict]:
    code, text, err = _main("--config-file", conf, "placement", "revert", run_id,
                            "--format", "json", *extra)
    return code, json.loads(text)


def _statuses(report: dict) -> dict[str, str]:
    return {node["nodename"]: node["status"] for node in report["nodes"]}


@pytest.fixture(params=["one node per transaction", "a group per transaction"])
def grouped(request, monkeypatch):
    """Both ways a revert (and the migration) writes nodes: at this size one per
    transaction, or, with every node a transaction's worth, all in one group (the
    groups written are counted: none in the first case, some in the second)."""
    written = []
    if request.param == "a group per transaction":
        monkeypatch.setattr(tree_change, "TRANSACTIONS_PER_BATCH", 1)
        applied = tree_change.applied_together

        def counted(apply, changes, checks):
            done = applied(apply, changes, checks)
            written.extend([len(changes)] if done else [])
            return done

        monkeypatch.setattr(tree_change, "applied_together", counted)
    yield written
    assert bool(written) == (request.param == "a group per transaction")


def test_revert_restores_every_table_and_its_revert_restores_the_migration(db_url, tmp_path,
                                                                           grouped):
    conf, before, run_id = _migrated(db_url, tmp_path)
    migrated = normalized_dump(db_url)
    code, report = _revert(conf, run_id)
    assert code == 0, report
    assert set(_statuses(report).values()) == {"reverted"}
    assert normalized_dump(db_url) == before
    code, again = _revert(conf, report["revert_run"])
    assert code == 0 and set(_statuses(again).values()) == {"reverted"}
    assert normalized_dump(db_url) == migrated


def test_a_node_changed_after_the_run_is_refused_and_the_others_revert(db_url, tmp_path,
                                                                       grouped):
    conf, before, run_id = _migrated(db_url, tmp_path)
    consumer = _consumer_of("cmp-0001")
    with PlacementDirect(make_conf(db_url)) as placement:
        body = helpers.ok(placement.get(f"/allocations/{consumer}", microversion="1.28"))
        helpers.ok(placement.put(f"/allocations/{consumer}", microversion="1.28", json={
            **body, "allocations": {rp: {"resources": entry["resources"]}
                                    for rp, entry in body["allocations"].items()}}))
    code, report = _revert(conf, run_id)
    assert code == manage.EXIT_REFUSED
    statuses = _statuses(report)
    assert statuses == {"cmp-0000": "reverted", "cmp-0001": "refused", "cmp-0002": "reverted"}
    [refused] = [node for node in report["nodes"] if node["status"] == "refused"]
    assert refused["reason"].startswith(f"changed since the run: consumer {consumer} generation")
    assert "\n" not in refused["reason"] and refused["changes"] == {}
    with PlacementDirect(make_conf(db_url)) as placement:
        sizes = {host: len(helpers.tree(placement, helpers.generator.stable_uuid(0, host)))
                 for host in statuses}
    assert sizes == {"cmp-0000": 1, "cmp-0001": 9, "cmp-0002": 1}


def test_the_dry_run_plan_is_what_the_revert_writes_and_writes_nothing(db_url, tmp_path,
                                                                       grouped):
    conf, before, run_id = _migrated(db_url, tmp_path)
    migrated = normalized_dump(db_url)
    code, plan = _revert(conf, run_id, "--dry-run")
    assert code == 0 and plan["revert_run"] is None
    assert set(_statuses(plan).values()) == {"would-revert"}
    assert normalized_dump(db_url) == migrated
    code, done = _revert(conf, run_id)
    assert code == 0
    assert [node["changes"] for node in plan["nodes"]] == [
        node["changes"] for node in done["nodes"]]
    assert all(node["changes"]["delete"] for node in done["nodes"])
    assert normalized_dump(db_url) == before


def test_a_second_revert_finds_every_node_already_back(db_url, tmp_path):
    conf, before, run_id = _migrated(db_url, tmp_path, hosts=2)
    assert _revert(conf, run_id)[0] == 0
    code, report = _revert(conf, run_id)
    assert code == 0 and set(_statuses(report).values()) == {"already-reverted"}
    assert normalized_dump(db_url) == before


def test_only_the_named_hosts_are_reverted(db_url, tmp_path):
    conf, before, run_id = _migrated(db_url, tmp_path)
    code, report = _revert(conf, run_id, "--host", "cmp-0002")
    assert code == 0 and _statuses(report) == {"cmp-0002": "reverted"}
    assert children(db_url) == 2 * 8
    code, text, err = _main("--config-file", conf, "placement", "revert", run_id,
                            "--host", "nowhere")
    assert code == manage.EXIT_BAD_INPUT and text == ""
    assert err.strip().endswith(f"run {run_id} changed no node of nowhere")


def _journal_rows(db_url: str) -> list[tuple[str, str]]:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(
                sa.select(schema.nodes.c.run_id, schema.nodes.c.root))]
    finally:
        engine.dispose()


def test_a_revert_killed_mid_way_converges_when_run_again(db_url, tmp_path):
    hosts = 2 * tree_change.TRANSACTIONS_PER_BATCH  # two nodes per transaction
    conf, before, run_id = _migrated(db_url, tmp_path, hosts=hosts)
    process = start_revert(conf, run_id, "--workers", "1")
    wait_until_reverting(db_url, process, below=(hosts - 1) * 8)
    killed = process.poll() is None
    if killed:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(60)
    left = children(db_url)
    assert killed and 0 < left < hosts * 8, "the revert ended before it could be killed"
    assert left % 8 == 0  # every node reverted or untouched: nothing half-done
    rows = _journal_rows(db_url)
    revert_rows = [root for run, root in rows if run != run_id]
    assert len(revert_rows) == hosts - left // 8  # the killed run's journal matches exactly
    code, report = _revert(conf, run_id)
    assert code == 0, report
    statuses = list(_statuses(report).values())
    assert statuses.count("already-reverted") == hosts - left // 8
    assert statuses.count("reverted") == left // 8
    assert normalized_dump(db_url) == before


def test_a_group_that_fails_is_written_one_node_at_a_time_which_names_the_node(
        db_url, tmp_path, monkeypatch):
    """A node written meanwhile (after the revert read it) fails its group's
    transaction: nothing of the group is written, then each node on its own is,
    and only that node is left, with one line saying why."""
    monkeypatch.setattr(tree_change, "TRANSACTIONS_PER_BATCH", 1)
    conf, before, run_id = _migrated(db_url, tmp_path)
    root = helpers.generator.stable_uuid(0, "cmp-0001")
    read_now = Reverter.read_now

    def read_then_written_meanwhile(self, batch):
        now = read_now(self, batch)
        if self.run_id is not None and root in now:
            with PlacementDirect(make_conf(db_url)) as placement:
                helpers.ok(placement.put("/traits/CUSTOM_MEANWHILE", microversion="1.6"))
                provider = helpers.ok(placement.get(f"/resource_providers/{root}"))
                helpers.ok(placement.put(f"/resource_providers/{root}/traits", json={
                    "traits": ["CUSTOM_MEANWHILE"],
                    "resource_provider_generation": provider["generation"]},
                    microversion="1.6"))
        return now

    monkeypatch.setattr(Reverter, "read_now", read_then_written_meanwhile)
    applied, groups = tree_change.applied_together, []
    monkeypatch.setattr(tree_change, "applied_together", lambda *args: groups.append(
        (len(args[1]), applied(*args))) or groups[-1][1])
    code, report = _revert(conf, run_id)
    assert groups == [(3, False)]  # tried together, rolled back, then one by one
    assert code == manage.EXIT_CONFLICT
    assert _statuses(report) == {"cmp-0000": "reverted", "cmp-0001": "conflict",
                                 "cmp-0002": "reverted"}
    [conflict] = [node for node in report["nodes"] if node["status"] == "conflict"]
    assert "\n" not in conflict["reason"] and conflict["reason"].startswith("written meanwhile")
    assert conflict["changes"] == {}
    revert_roots = [root for run, root in _journal_rows(db_url) if run == report["revert_run"]]
    assert sorted(revert_roots) == sorted(helpers.generator.stable_uuid(0, host)
                                          for host in ("cmp-0000", "cmp-0002"))
