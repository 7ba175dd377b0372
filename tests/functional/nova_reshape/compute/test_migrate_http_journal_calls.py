"""A re-run over HTTP with the journal file of the earlier runs, counted by the service.

A node the file vouches for (its last record is an outcome read back as
the tree's listing alone) and listed with every provider's uuid, name,
parent and recorded generation is not read but for its root's allocations
(docs/performance.md, "Third pass"): 1 request for an unchanged flat
4-GPU node instead of its 5 inventories and the root's allocations.
Anything else is read as without the file, every engine.
"""

from __future__ import annotations

from nova_reshape.compute import migrate
from nova_reshape.journal import journal_file, store
from nova_reshape.transport import http_placement
from nova_reshape.virt.host import load_hosts
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS
from tests.fixtures.served import served
from tests.functional.nova_reshape.compute.test_migrate_http_calls import (
    HOSTS,
    _cloud_reads,
    _deployment,
    _node_kinds,
    _providers,
)
from tests.functional.nova_reshape.conftest import ADMIN_HEADERS
from tests.functional.nova_reshape.migrate_helpers import shown_simulation


def _journal_run(path: str) -> str:
    """A run started in the journal file ``path`` (created if need be), as the
    command starts one; its id."""
    engine = journal_file.open_journal(path, create=True)
    try:
        return store.start_run(engine, "migrate_compute_inventory", "test", {},
                               custom_names={})
    finally:
        engine.dispose()


def _run(placement, out, journal: str | None, show=None):
    """One migration run through ``placement``; with ``journal``, journaled in it."""
    settings = migrate.Settings(
        show=show, journal=None if journal is None else _journal_run(journal),
        journal_file=journal)
    return migrate.Migration(placement, load_hosts([out]), settings).run()


def _runs(db_url, out, journals, touch=None):
    """Runs over HTTP, one per entry of ``journals`` (a journal file or None; the
    first shown, the others not), ``touch(placement)`` between the first two;
    per run its results and the service's requests."""
    done = []
    with served(make_conf(db_url)) as (url, log):
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            for index, journal in enumerate(journals):
                if index == 1 and touch is not None:
                    touch(client)
                start = len(log)
                results = _run(client, out, journal, shown_simulation if not index else None)
                done.append((results, log.since(start)))
        finally:
            client.close()
    return done


def _unchanged(results):
    return [r for r in results if r.status == "unchanged"]


def test_a_re_run_with_the_journal_reads_an_unchanged_node_s_root_allocations_only(
        db_url, tmp_path):
    """First run journaled: 2 flat 4-GPU nodes migrated. Second run with the same
    file: each costs 1 request, its root's allocations, kind by kind at the
    service. A run without the file reads as before: per provider its
    inventories and the root's allocations (6)."""
    out = _deployment(db_url, tmp_path, gpus=4)
    journal = str(tmp_path / "journal.sqlite")
    (first, _), (again, requests), (without, plain) = _runs(
        db_url, out, [journal, journal, None])
    changed = [r for r in first if r.status == "migrated"]
    assert len(changed) == HOSTS - 1
    assert {_providers(r.detail.tree_after, r) for r in changed} == {5}
    roots = {r.nodename for r in changed}

    recorded = [r for r in _unchanged(again) if r.nodename in roots]
    assert len(recorded) == HOSTS - 1, [(r.nodename, r.status) for r in again]
    assert {r.calls for r in recorded} == {1}
    assert _node_kinds(requests) == {"GET /resource_providers/{id}/allocations": HOSTS - 1}
    assert len(requests) == _cloud_reads(requests) + sum(r.calls for r in again)

    read = [r for r in _unchanged(without) if r.nodename in roots]
    assert {r.calls for r in read} == {6}
    assert _node_kinds(plain) == {"GET /resource_providers/{id}/inventories": 5 * len(read),
                                  "GET /resource_providers/{id}/allocations": len(read)}


def _listing(placement) -> list[dict]:
    return placement.get("/resource_providers", microversion="1.14").json()[
        "resource_providers"]


def test_a_provider_changed_after_the_journaled_run_is_read_and_found(db_url, tmp_path):
    """A child's inventory changed after the journaled run (its generation moved):
    that node is read as without the file (per provider its inventories), its
    changed record is found and planned back; the others cost 1 request."""
    out = _deployment(db_url, tmp_path, gpus=4)
    journal = str(tmp_path / "journal.sqlite")
    touched = []

    def change_a_child(placement):
        child = sorted((p["name"], p["uuid"], p["root_provider_uuid"])
                       for p in _listing(placement) if p["parent_provider_uuid"])[0]
        path = f"/resource_providers/{child[1]}/inventories"
        body = placement.get(path).json()
        body["inventories"]["VGPU"]["reserved"] = 1
        response = placement.put(path, json=body)
        assert response.status_code == 200, response.text
        touched.append(child[2])

    (first, _), (again, requests) = _runs(db_url, out, [journal, journal], change_a_child)
    by_root = {r.root: r for r in again}
    raced = by_root[touched[0]]
    assert raced.status == "updated", (raced.status, raced.error, raced.findings)
    assert raced.calls > 1 + 5  # read (5 inventories, the root's allocations), then written
    roots = {r.root for r in first if r.status == "migrated"} - {touched[0]}
    others = [r for r in _unchanged(again) if r.root in roots]
    assert len(others) == HOSTS - 2
    assert {r.calls for r in others} == {1}
    kinds = _node_kinds(requests)
    assert kinds["PUT /resource_providers/{id}/inventories"] + kinds["POST /reshaper"] == 1


def test_a_journal_of_another_deployment_is_not_trusted(engine, db_url, tmp_path):
    """The same deployment (the same generated uuids) built again in a fresh
    database and migrated without the file: the file's records name children
    this Placement does not have, so every node is read as without the file."""
    out = _deployment(db_url, tmp_path, gpus=4)
    journal = str(tmp_path / "journal.sqlite")
    (first, _), = _runs(db_url, out, [journal])
    assert len([r for r in first if r.status == "migrated"]) == HOSTS - 1

    other = tmp_path / "other"
    other.mkdir()
    other_url = SERVERS.fresh_url(engine)
    out = _deployment(other_url, other, gpus=4)
    (migrated, _), (again, requests) = _runs(other_url, out, [None, journal])
    roots = {r.root for r in migrated if r.status == "migrated"}
    assert roots == {r.root for r in first if r.status == "migrated"}  # the same uuids
    read = [r for r in _unchanged(again) if r.root in roots]
    assert len(read) == HOSTS - 1
    assert {r.calls for r in read} == {6}
    assert _node_kinds(requests) == {"GET /resource_providers/{id}/inventories": 5 * len(read),
                                     "GET /resource_providers/{id}/allocations": len(read)}
