"""audit --delete, heal_allocations and sync_aggregates journaled, then reverted, every engine.

Each command run in-process writes a journaled run; ``placement revert``
then puts every Placement table back as it was before the command (a
normalized dump: generations and timestamps aside), refuses a node
written since while the others are reverted, and a second revert finds
them already reverted. In-process the commands write in batches, one
transaction each, yet the rows (generations included) are those nova's
requests leave: the same command over ``--placement-url`` on a twin
database gives the same dump, generations kept.
"""

from __future__ import annotations

import contextlib
import json

from nova_reshape.cmd import manage
from nova_reshape.journal import Run, RunStatus, get_run
from nova_reshape.transport import http_placement
from placement_wsgi.db.database import Database
from tests.fixtures import consistency as cx
from tests.fixtures import heal_cloud as hc
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse)
from tests.fixtures.placement_dump import normalized_dump
from tests.functional.nova_reshape.cmd.test_from_nova import run

#: An instance nova-compute placed on cmp-2 after the audit.
NEW_GUEST = "70000000-0000-4000-8000-000000000001"
#: sync_aggregates' aggregates here: cmp-1 gets az1 and fast, cmp-3 gets fast.
TWO_HOSTS = dict(cx.HOST_AGGREGATES, fast=(api_fx.FAST_UUID, [fx.CMP1, fx.CMP3]))


def _run_id(out: str) -> str:
    [line] = [line for line in out.splitlines() if line.startswith("journaled as run ")]
    return line.split()[3]


def _run(url: str, run_id: str) -> Run:
    database = Database(url)
    try:
        found = get_run(database.engine, run_id)
    finally:
        database.dispose()
    assert found is not None
    return found


def _dumped_run(url: str, argv: tuple[str, ...], expected: int) -> tuple[dict, Run]:
    """The dump before the command, then the command (its exit status checked) and
    its journaled run."""
    before = normalized_dump(url)
    code, out, err = run(*argv)
    assert code == expected, out + err
    return before, _run(url, _run_id(out))


def _revert(conf: str, run_id: str, *argv: str) -> tuple[int, dict]:
    code, out, err = run("--config-file", conf, "placement", "revert", run_id, "--format",
                         "json", *argv)
    return code, json.loads(out) if out.strip() else {"error": err}


def _statuses(report: dict) -> dict[str, str]:
    return {node["nodename"]: node["status"] for node in report["nodes"]}


@contextlib.contextmanager
def audited(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        yield damaged, ("--config-file", damaged.placement_conf, "placement", "audit",
                        "--nova-config", damaged.nova_conf, "--delete")


@contextlib.contextmanager
def synced(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path, seed=cx.seed_sync) as damaged:
        cx.host_aggregates(damaged.cloud.api_url, TWO_HOSTS)
        yield damaged, ("--config-file", damaged.placement_conf, "placement",
                        "sync_aggregates", "--nova-config", damaged.nova_conf)


def test_audit_delete_is_reverted_exactly_and_only_once(engine, tmp_path):
    with audited(engine, tmp_path) as (damaged, argv):
        before, journaled = _dumped_run(damaged.placement_url, argv, 4)
        run_id = journaled.id
        assert (journaled.command, journaled.status, journaled.changed) == (
            "audit", RunStatus.OK, 3)  # the trees of cmp-1 and cmp-2, the shared storage
        assert cx.held(damaged.placement_url) == cx.AFTER_DELETE
        code, report = _revert(damaged.placement_conf, run_id)
        assert code == 0, report
        # The shared storage's only change was SPREAD's allocation there, which
        # putting cmp-1's tree back (SPREAD is in it) restored already.
        assert _statuses(report) == {fx.CMP1_NODE: "reverted", fx.CMP2_NODE: "reverted",
                                     "shared-storage": "already-reverted"}
        assert normalized_dump(damaged.placement_url) == before
        code, report = _revert(damaged.placement_conf, run_id)
        assert code == 0 and set(_statuses(report).values()) == {"already-reverted"}
        assert normalized_dump(damaged.placement_url) == before


def test_audit_delete_revert_refuses_a_node_written_since(engine, tmp_path):
    with audited(engine, tmp_path) as (damaged, argv):
        code, out, _ = run(*argv)
        run_id = _run_id(out)
        with cx.served(damaged.placement_url) as url:  # nova-compute wrote to cmp-2 since
            placement = manage_client(url)
            cx.ok(placement.put(f"/allocations/{NEW_GUEST}", microversion="1.28",
                                json={"allocations": {fx.CMP2_UUID: {"resources": {"VCPU": 1}}},
                                      "project_id": "p", "user_id": "u",
                                      "consumer_generation": None}))
            placement.close()
        code, report = _revert(damaged.placement_conf, run_id)
        assert code == manage.EXIT_REFUSED, report
        assert _statuses(report) == {fx.CMP1_NODE: "reverted", fx.CMP2_NODE: "refused",
                                     "shared-storage": "already-reverted"}
        held = cx.held(damaged.placement_url)
        assert held[cx.GHOST] == cx.ORPHANED[cx.GHOST]  # cmp-1's tree is back
        assert held[fx.SPREAD] == cx.before_delete()[fx.SPREAD]
        assert held[fx.CMP3_GUEST] == cx.AFTER_DELETE[fx.CMP3_GUEST]  # cmp-2 refused


def manage_client(url: str):
    """A client of the Placement served at ``url`` (another writer)."""
    return http_placement(url, token="admin", headers={"X-Roles": "admin,service"})


def test_sync_aggregates_is_reverted_exactly_and_refuses_a_node_written_since(engine, tmp_path):
    with synced(engine, tmp_path) as (damaged, argv):
        before, journaled = _dumped_run(damaged.placement_url, argv, 0)
        run_id = journaled.id
        assert journaled.changed == 2
        code, report = _revert(damaged.placement_conf, run_id, "--dry-run")
        assert code == 0 and set(_statuses(report).values()) == {"would-revert"}
        code, report = _revert(damaged.placement_conf, run_id)
        assert code == 0, report
        # The aggregate the run created (fast) is gone again with the memberships.
        assert normalized_dump(damaged.placement_url) == before
        assert _revert(damaged.placement_conf, run_id)[0] == 0
        code, out, err = run(*argv)  # again, then cmp-3 gets another aggregate meanwhile
        run_id = _run_id(out)
        with cx.served(damaged.placement_url) as url:
            placement = manage_client(url)
            body = cx.ok(placement.get(f"/resource_providers/{fx.CMP3_UUID}/aggregates",
                                       microversion="1.19"))
            cx.ok(placement.put(f"/resource_providers/{fx.CMP3_UUID}/aggregates",
                                microversion="1.19", json={
                                    "aggregates": [*body["aggregates"], cx.PLACEMENT_ONLY],
                                    "resource_provider_generation":
                                        body["resource_provider_generation"]}))
            placement.close()
        code, report = _revert(damaged.placement_conf, run_id)
        assert code == manage.EXIT_REFUSED, report
        assert _statuses(report) == {fx.CMP1_NODE: "reverted", fx.CMP3_NODE: "refused"}
        assert "aggregates of" in report["nodes"][1]["reason"]
        assert cx.provider_aggregates(damaged.placement_url) == {
            fx.CMP1_UUID: {cx.PLACEMENT_ONLY},
            fx.CMP3_UUID: {api_fx.AZ1_UUID, api_fx.FAST_UUID, cx.PLACEMENT_ONLY}}


def test_heal_is_reverted_exactly_and_refused_once_written_since(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows()) as cloud:
        url, conf = hc.placement(engine, tmp_path / "p")
        argv = ("placement", "heal_allocations", "--nova-config",
                cloud.nova_conf(tmp_path / "nova.conf"), "--config-file", conf,
                "--skip-port-allocations")
        before, journaled = _dumped_run(url, argv, 0)
        run_id = journaled.id
        assert journaled.counts == {"healed": 4}
        code, report = _revert(conf, run_id)
        assert code == 0 and _statuses(report) == {hc.CMP3_NODE: "reverted"}, report
        assert normalized_dump(url) == before  # healed consumers gone, the owner back
        assert hc.consumers(url)[hc.WRONG_OWNER][1:3] == ("px", "ux")
        assert _statuses(_revert(conf, run_id)[1]) == {hc.CMP3_NODE: "already-reverted"}
        code, out, _ = run(*argv)
        run_id = _run_id(out)
        with cx.served(url) as served_url:
            placement = manage_client(served_url)
            hc.allocate(placement, hc.BUSY, hc.CMP3_UUID, hc.SMALL)  # written since
            placement.close()
        code, report = _revert(conf, run_id)
        assert code == manage.EXIT_REFUSED, report
        assert f"consumer {hc.BUSY} arrived in the tree" in report["nodes"][0]["reason"]


def test_over_http_nothing_is_journaled(engine, tmp_path):
    with audited(engine, tmp_path) as (damaged, _), cx.served(damaged.placement_url) as url:
        code, out, err = run("placement", "audit", "--placement-url", url, "--token", "admin",
                             "--nova-config", damaged.nova_conf, "--delete")
        assert code == 4 and "journaled" not in out, out + err
        code, out, _ = run("--config-file", damaged.placement_conf, "placement", "runs")
        assert code == 0 and len(out.splitlines()) <= 1


def _twins(make, tmp_path):
    """The same command in-process and over HTTP on twin databases: both dumps,
    generations kept."""
    dumps = []
    for mode in ("direct", "http"):
        directory = tmp_path / mode
        directory.mkdir(parents=True)
        with make(directory) as (url, conf, argv):
            if mode == "direct":
                code, out, err = run(*argv, "--config-file", conf)
            else:
                with cx.served(url) as served_url:
                    code, out, err = run(*argv, "--placement-url", served_url,
                                         "--token", "admin")
            assert code in (0, 4), out + err
            dumps.append(normalized_dump(url, generations=True))
    return dumps


def test_in_process_rows_and_generations_are_those_of_novas_requests(engine, tmp_path):
    @contextlib.contextmanager
    def audit(directory):
        with cx.damaged_cloud(engine, directory) as damaged:
            yield damaged.placement_url, damaged.placement_conf, (
                "placement", "audit", "--nova-config", damaged.nova_conf, "--delete")

    @contextlib.contextmanager
    def sync(directory):
        with synced(engine, directory) as (damaged, _):
            yield damaged.placement_url, damaged.placement_conf, (
                "placement", "sync_aggregates", "--nova-config", damaged.nova_conf)

    @contextlib.contextmanager
    def heal(directory):
        with api_fx.nova_cloud(engine, cell2_rows=hc.cell2_rows()) as cloud:
            url, conf = hc.placement(engine, directory / "p")
            yield url, conf, ("placement", "heal_allocations", "--nova-config",
                              cloud.nova_conf(directory / "nova.conf"),
                              "--skip-port-allocations")

    for make in (audit, sync, heal):
        direct, http = _twins(make, tmp_path / make.__name__)
        assert direct == http, make.__name__
