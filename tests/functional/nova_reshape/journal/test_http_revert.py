"""A migration over ``--placement-url`` journaled in a file, and put back over HTTP.

The service runs on the engine's database behind a real HTTP server
(tests/fixtures/served.py); the cloud is the mixed one of test_revert.py.
What the revert must give is checked on a normalized dump of every
Placement table (tests/fixtures/placement_dump.py), never through the
journal's code. A migration killed between a node's intent and its
outcome is made two ways: by stopping the run's HTTP client at a chosen
request (before the third node's first write, at its reshaper, after it),
and by deleting a node's outcome from the file (what such a run leaves,
for nodes in a chosen state).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

import pytest

from nova_reshape.cmd import manage, placement_access
from nova_reshape.journal import journal_file, schema
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.fixtures.http_journal import Cloud, migrated, served_cloud
from tests.fixtures.placement_dump import normalized_dump
from tests.fixtures.transports import RecordingTransport
from tests.functional.nova_reshape import migrate_helpers as helpers


@pytest.fixture
def cloud(db_url, tmp_path) -> Iterator[Cloud]:
    yield from served_cloud(db_url, tmp_path)



def _statuses(report: dict) -> dict[str, str]:
    return {node["nodename"]: node["status"] for node in report["nodes"]}


def test_revert_over_http_restores_every_table_and_is_revertable(cloud):
    run_id = migrated(cloud)
    after_run = normalized_dump(cloud.db_url)
    code, plan = cloud.revert(run_id, "--dry-run")
    assert code == 0 and set(_statuses(plan).values()) == {"would-revert"}
    assert normalized_dump(cloud.db_url) == after_run
    code, report = cloud.revert(run_id)
    assert code == 0, report
    assert set(_statuses(report).values()) == {"reverted"}
    assert [node["changes"] for node in plan["nodes"]] == [
        node["changes"] for node in report["nodes"]]
    assert normalized_dump(cloud.db_url) == cloud.before
    code, again = cloud.revert(report["revert_run"])
    assert code == 0 and set(_statuses(again).values()) == {"reverted"}, again
    assert normalized_dump(cloud.db_url) == after_run


def test_a_node_changed_over_http_is_refused_and_the_others_revert(cloud):
    run_id = migrated(cloud)
    root = helpers.generator.stable_uuid(0, "cmp-0001")
    with PlacementDirect(make_conf(cloud.db_url)) as placement:
        child = next(rp for rp in helpers.tree(placement, root) if rp != "cmp-0001")
        [uuid] = [p["uuid"] for p in helpers.ok(placement.get(
            f"/resource_providers?name={child}", microversion="1.14"))["resource_providers"]]
        helpers.ok(placement.put("/traits/CUSTOM_SINCE", microversion="1.6"))
        body = helpers.ok(placement.get(f"/resource_providers/{uuid}/traits",
                                        microversion="1.6"))
        helpers.ok(placement.put(f"/resource_providers/{uuid}/traits", microversion="1.6",
                                 json={"traits": [*body["traits"], "CUSTOM_SINCE"],
                                       "resource_provider_generation":
                                       body["resource_provider_generation"]}))
    code, report = cloud.revert(run_id)
    assert code == manage.EXIT_REFUSED
    assert _statuses(report) == {"cmp-0000": "reverted", "cmp-0001": "refused",
                                 "cmp-0002": "reverted"}
    [refused] = [node for node in report["nodes"] if node["status"] == "refused"]
    assert refused["reason"] == f"changed since the run: traits of {child} +CUSTOM_SINCE"


def _forget_outcome(journal: str, run_id: str, nodename: str) -> None:
    """The file as run ``run_id`` killed between ``nodename``'s intent and outcome
    leaves it."""
    connection = sqlite3.connect(journal)
    with connection:
        assert connection.execute(
            f"DELETE FROM {schema.nodes.name} WHERE run_id = ? AND nodename = ?",
            (run_id, nodename)).rowcount == 1
    connection.close()


def test_a_node_whose_outcome_is_missing_is_resolved_by_reading_placement(cloud):
    run_id = migrated(cloud)
    _forget_outcome(cloud.journal, run_id, "cmp-0002")
    code, report = cloud.revert(run_id)
    assert code == 0, [node["reason"] for node in report["nodes"]]
    assert _statuses(report) == {"cmp-0000": "reverted", "cmp-0001": "reverted",
                                 "cmp-0002": "reverted"}
    assert normalized_dump(cloud.db_url) == cloud.before


def test_a_node_never_written_and_one_cut_mid_way(cloud):
    run_id = migrated(cloud)
    code, _ = cloud.revert(run_id, "--host", "cmp-0000")
    assert code == 0
    _forget_outcome(cloud.journal, run_id, "cmp-0000")  # intent only, Placement at its before
    _forget_outcome(cloud.journal, run_id, "cmp-0001")
    root = helpers.generator.stable_uuid(0, "cmp-0001")
    with PlacementDirect(make_conf(cloud.db_url)) as placement:  # a write cut mid-way
        helpers.ok(placement.post("/resource_providers", microversion="1.20", json={
            "name": "cmp-0001-half", "parent_provider_uuid": root}))
    code, report = cloud.revert(run_id)
    assert code == manage.EXIT_REFUSED
    assert _statuses(report) == {"cmp-0002": "reverted", "cmp-0000": "already-reverted",
                                 "cmp-0001": "refused"}
    nodes = {node["nodename"]: node for node in report["nodes"]}
    assert nodes["cmp-0000"]["reason"].startswith("never written by the run")
    reason = nodes["cmp-0001"]["reason"]
    assert reason.startswith("the run's outcome for this node is missing and Placement "
                             "holds neither its before nor its planned after (provider ")
    assert "(cmp-0001-half) is new" in reason and reason.endswith(
        "run the migration again to complete it, then revert")


class Cut(Exception):
    """Where the test stops the migration, as SIGKILL would: nothing after it runs."""


def _cutting(monkeypatch, where: str) -> None:
    """The migration's HTTP client stops the run (:class:`Cut`, a BaseException
    like the signal's KeyboardInterrupt) on the third node: ``before-first-write``
    (its intent committed, nothing sent), ``at-reshaper`` (its children created,
    the reshaper not sent), ``after-reshaper`` (every node written, no outcome
    journaled: the batch's read-back never ran)."""
    real = placement_access.open_http

    @contextlib.contextmanager
    def open_http(url, token, headers):
        with real(url, token, headers) as client:
            recorded = RecordingTransport(client)
            reshapers = []

            def before(method: str, url: str) -> None:
                if method == "POST" and url == "/reshaper":
                    reshapers.append(url)
                    if where == "at-reshaper" and len(reshapers) == 3:
                        raise KeyboardInterrupt
                elif len(reshapers) == 2 and method != "GET" and where == "before-first-write":
                    raise KeyboardInterrupt
                elif len(reshapers) == 3 and where == "after-reshaper":
                    raise KeyboardInterrupt

            recorded.before = before
            yield recorded

    monkeypatch.setattr(placement_access, "open_http", open_http)


@pytest.mark.parametrize(("where", "third"), [
    ("before-first-write", "already-reverted"), ("after-reshaper", "reverted"),
    ("at-reshaper", "refused")])
def test_a_run_killed_between_intent_and_outcome_is_resolved(cloud, monkeypatch, where, third):
    with monkeypatch.context() as patched:
        _cutting(patched, where)
        code, _, err = cloud.migrate("--workers", "1")
    assert code == 130, err
    [run] = cloud.runs()
    engine = journal_file.open_journal(cloud.journal, create=False)
    pending = [key.nodename for key in journal_file.entry_keys(engine, run["id"])]
    engine.dispose()
    assert run["changed"] == 0 and pending == ["cmp-0000", "cmp-0001", "cmp-0002"]
    code, report = cloud.revert(run["id"])
    assert _statuses(report) == {"cmp-0000": "reverted", "cmp-0001": "reverted",
                                 "cmp-0002": third}
    if third == "refused":  # cut mid-way: the line says to complete it, then revert
        assert code == manage.EXIT_REFUSED
        assert report["nodes"][2]["reason"].endswith("run the migration again to complete "
                                                     "it, then revert")
        assert cloud.migrate()[0] == 0
        code, report = cloud.revert(run["id"])
        assert set(_statuses(report).values()) == {"reverted"}
    assert code == 0, report
    assert normalized_dump(cloud.db_url) == cloud.before


def test_workers_share_the_journal_file(cloud):
    code, text, err = cloud.migrate("--workers", "2")
    assert code == 0, (text, err)
    [run] = cloud.runs()
    assert run["changed"] == 3 and run["status"] == "ok"
    code, report = cloud.revert(run["id"])
    assert code == 0 and set(_statuses(report).values()) == {"reverted"}, report
    assert normalized_dump(cloud.db_url) == cloud.before
