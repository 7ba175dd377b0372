"""Placement calls per node of a run over HTTP, counted by the service, on every engine.

The service runs behind a request log (tests/fixtures/served.py), so every
request that reaches it is counted whatever the client believes it sent.
The run's own count must be the same: the run's reads of the whole cloud
(its one listing of providers, the traits in use and the providers holding
each, the sharing providers) plus each node's ``calls``. Each node's calls
are asserted from what they are for, no total written down:

* check: per provider its inventories and allocations (2 P); plus, for a
  node whose plan moves allocations, the whole body of each consumer moved
  (and of no other);
* write: one listing of the tree showing it as checked (so the checked
  state is written, not read again), the plan's writes, and the read-back:
  one listing of the tree, which shows every provider at the generation the
  node's writes answered, so nothing else is read.

An unchanged node costs its check read alone: per provider its inventories,
and the root's allocations (per provider when the run shows every node's
usage).
"""

from __future__ import annotations

import collections

import pytest

from nova_reshape.compute import migrate
from nova_reshape.transport import http_placement
from nova_reshape.virt.host import load_hosts
from tests.fixtures.config import make_conf
from tests.fixtures.served import served
from tests.functional.nova_reshape.compute import test_migrate_calls
from tests.functional.nova_reshape.conftest import ADMIN_HEADERS
from tests.functional.nova_reshape.migrate_helpers import shown_simulation

#: Hosts of the runs over HTTP: two changed nodes (each one's count is asserted on its
#: own, beside another's) and an ironic one.
HOSTS = 3


def _deployment(db_url, tmp_path, gpus: int, kinds: tuple[str, ...] = ()) -> str:
    return test_migrate_calls._deployment(db_url, tmp_path, gpus, kinds, hosts=HOSTS)


def _run(db_url, out, progress=None, show=shown_simulation):
    """The run over HTTP: its results, its own count and the service's."""
    with served(make_conf(db_url)) as (url, log):
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            run = migrate.Migration(client, load_hosts([out]), migrate.Settings(show=show),
                                    progress=progress)
            results = run.run()
        finally:
            client.close()
        return results, run.calls, len(log), _cloud_reads(log.requests)


def _providers(tree, result) -> int:
    return len(tree.get_provider_uuids(result.nodename))


def _check_read(simulation, result) -> int:
    return 2 * _providers(simulation.tree_before, result)


def _moved(simulation) -> int:
    return len(simulation.plan.allocations) if simulation.plan.reshape else 0


def _full_read_back(result) -> int:
    """A read-back the listing did not settle: the listing, then per provider
    its inventories and allocations."""
    return 1 + 2 * _providers(result.detail.tree_after, result)


def _expected_changed(result) -> int:
    simulation = result.detail
    return _check_read(simulation, result) + _moved(simulation) + 1 + result.writes + 1


#: The run's reads of the whole cloud (never a node's).
CLOUD_READS = ("/resource_providers", "/traits?associated=true",
               "/resource_providers?required=")


def _is_cloud_read(method: str, path: str) -> bool:
    return method == "GET" and (path in CLOUD_READS[:2] or path.startswith(CLOUD_READS[2]))


def _cloud_reads(requests) -> int:
    return sum(1 for method, path in requests if _is_cloud_read(method, path))


#: Every device kind the generator makes besides GPUs (NUMA, PCI passthrough, FPGA).
ALL_KINDS = ("numa", "pci", "accelerators")


@pytest.mark.parametrize("gpus,kinds", [(4, ()), (1, ()), (0, ()), (4, ALL_KINDS),
                                        (1, ALL_KINDS)])
def test_over_http_a_node_costs_its_reads_and_writes_and_the_service_agrees(
        db_url, tmp_path, gpus, kinds):
    out = _deployment(db_url, tmp_path, gpus, kinds)
    results, calls, served_requests, cloud = _run(db_url, out)
    changed = [r for r in results if r.status in ("migrated", "updated")]
    assert len(changed) == HOSTS - 1, [(r.nodename, r.status, r.error) for r in results]
    for result in changed:
        assert not result.violations, result.violations
        assert result.calls == _expected_changed(result), result.nodename
        if gpus:
            assert result.status == "migrated"
            assert 0 < len(result.detail.plan.allocations) <= 6  # this node's instances
    assert served_requests == calls == cloud + sum(r.calls for r in results)

    # Again, shown (the report draws every node's usage): per provider its
    # inventories and allocations.
    again, calls, served_requests, cloud = _run(db_url, out)
    assert {r.status for r in again} == {"unchanged", "skipped"}
    for result in again:
        if result.status == "unchanged":
            assert result.writes == 0
            assert result.calls == _check_read(result.detail, result), result.nodename
    assert served_requests == calls == cloud + sum(r.calls for r in again)

    # Again, not shown: per provider its inventories, and the root's allocations
    # (an unchanged node's check needs no other).
    providers = {r.nodename: _providers(r.detail.tree_after, r) for r in changed}
    quiet, calls, served_requests, cloud = _run(db_url, out, show=None)
    assert {r.status for r in quiet} == {"unchanged", "skipped"}
    for result in quiet:
        if result.status == "unchanged":
            assert result.writes == 0
            assert result.calls == providers[result.nodename] + 1, result.nodename
    assert served_requests == calls == cloud + sum(r.calls for r in quiet)


def _run_beside(db_url, out, progress, clients: list, logs: list):
    """The run over HTTP (``progress`` its progress callback) beside another client
    of the same service, put in ``clients`` (the service's request log in
    ``logs``) before the run starts; the run, its results and the log."""
    with served(make_conf(db_url)) as (url, log):
        logs.append(log)
        clients.append(http_placement(url, token="admin", headers=ADMIN_HEADERS))
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            run = migrate.Migration(client, load_hosts([out]),
                                    migrate.Settings(show=shown_simulation), progress=progress)
            results = run.run()
        finally:
            client.close()
            clients[0].close()
    return run, results, log


def test_over_http_a_tree_changed_after_its_check_is_read_and_planned_again(db_url, tmp_path):
    """The checked state is written only while the tree's listing shows every
    provider at the generation read; another writer between check and write
    makes the node be read again (and planned from what it reads)."""
    out = _deployment(db_url, tmp_path, gpus=1)
    touched: list[str] = []
    theirs: list[int] = []  # the other writer's requests, by their place in the log
    logs: list = []
    http_client: list = []

    def another_writer(phase, done, total):
        if phase != "check" or done != total or touched:
            return
        placement, log = http_client[0], logs[0]
        start = len(log)
        listing = placement.get("/resource_providers", microversion="1.14").json()
        root = sorted((p["name"], p["uuid"], p["generation"])
                      for p in listing["resource_providers"]
                      if p["parent_provider_uuid"] is None)[0]
        response = placement.put(f"/resource_providers/{root[1]}/aggregates", json={
            "aggregates": [], "resource_provider_generation": root[2]}, microversion="1.19")
        assert response.status_code == 200, response.text
        touched.append(root[0])
        theirs.extend(range(start, len(log)))

    run, results, log = _run_beside(db_url, out, another_writer, http_client, logs)
    requests = len(log)
    run_requests = [request for index, request in enumerate(log.requests)
                    if index not in theirs]
    assert touched
    by_name = {r.nodename: r for r in results}
    raced = by_name[touched[0]]
    assert raced.status == "migrated" and not raced.violations, raced.error
    others = [r for r in results if r.status == "migrated" and r is not raced]
    assert others
    # Read again in full before the write, as the report client reads (the tree's
    # listing, inventories, aggregates, traits and allocations of each provider)
    # and its moved consumers again: its calls exceed an undisturbed node's by that
    # read (the other writer's 2 requests are not the run's).
    simulation = raced.detail
    again = 1 + 4 * _providers(simulation.tree_before, raced) + _moved(simulation)
    assert raced.calls == _expected_changed(raced) + again
    assert len(theirs) == 2
    assert requests == run.calls + 2
    assert run.calls == _cloud_reads(run_requests) + sum(r.calls for r in results)


def _run_touching_after_write(db_url, out, touch):
    """A run over HTTP where, once the first node is written (before its batch is
    read back), ``touch(placement, root uuid)`` writes to that node's tree from
    another client; the run's results, the touched node's name, and the run's
    count and the service's (the other client's requests left out)."""
    touched: list[str] = []
    clients, logs = [], []
    generations: dict[str, int] = {}  # each provider's as the check phase ended

    def another_writer(phase, done, total):
        if phase == "check" and done == total and not generations:
            listing = clients[0].get("/resource_providers", microversion="1.14").json()
            generations.update((p["uuid"], p["generation"])
                               for p in listing["resource_providers"])
            theirs.append(1)
        if phase != "migrate" or touched:
            return
        placement, log = clients[0], logs[0]
        start = len(log)
        listing = placement.get("/resource_providers", microversion="1.14").json()
        providers = listing["resource_providers"]
        written = [p for p in providers if p["parent_provider_uuid"] is None
                   and p["generation"] > generations.get(p["uuid"], p["generation"])]
        if not written:
            return
        touch(placement, written[0]["uuid"])
        touched.append(written[0]["name"])
        theirs.append(len(log) - start)

    theirs: list[int] = []
    run, results, log = _run_beside(db_url, out, another_writer, clients, logs)
    assert touched
    return results, touched[0], run.calls, len(log) - sum(theirs)


def _root_generation(placement, root: str) -> int:
    response = placement.get(f"/resource_providers/{root}", microversion="1.14")
    assert response.status_code == 200, response.text
    return response.json()["generation"]


def test_over_http_a_read_back_listing_the_writes_do_not_explain_reads_the_tree_in_full(
        db_url, tmp_path):
    """Another writer after a node's writes, before its read-back: the listing
    shows a generation the node's writes did not answer, so the tree is read
    back in full (each provider's inventories and allocations) and checked.
    (Nodes without GPUs: their writes are PUTs, each answering its generation;
    a provider the reshaper wrote need only be past the generation sent.)"""
    out = _deployment(db_url, tmp_path, gpus=0)

    def put_aggregates(placement, root):
        response = placement.put(f"/resource_providers/{root}/aggregates", json={
            "aggregates": [], "resource_provider_generation": _root_generation(placement, root)},
            microversion="1.19")
        assert response.status_code == 200, response.text

    results, touched, calls, served_requests = _run_touching_after_write(
        db_url, out, put_aggregates)
    by_name = {r.nodename: r for r in results}
    raced = by_name[touched]
    assert raced.status == "updated" and not raced.violations, raced.error
    assert raced.calls == _expected_changed(raced) - 1 + _full_read_back(raced)
    for result in results:
        if result.status == "updated" and result is not raced:
            assert result.calls == _expected_changed(result), result.nodename
    assert served_requests == calls


def test_over_http_a_provider_added_after_the_writes_is_found_by_the_read_back(
        db_url, tmp_path):
    """A provider added to a written tree before its read-back: the listing does
    not show the planned providers, the tree is read back in full, and the
    node is reported as not as planned (the run stops after the batch)."""
    out = _deployment(db_url, tmp_path, gpus=1)

    def add_child(placement, root):
        response = placement.post("/resource_providers", json={
            "name": f"stranger-{root}", "parent_provider_uuid": root}, microversion="1.20")
        assert response.status_code == 200, response.text

    results, touched, calls, served_requests = _run_touching_after_write(
        db_url, out, add_child)
    raced = {r.nodename: r for r in results}[touched]
    assert raced.status == migrate.INVARIANT
    assert any("present but not planned" in v.message for v in raced.violations), \
        raced.violations
    assert served_requests == calls


def _kind(method: str, path: str) -> str:
    """A request as its kind: ids and query values left out."""
    parts = ["{id}" if len(part) == 36 and part.count("-") == 4 else part
             for part in path.split("?")[0].split("/")]
    query = path.partition("?")[2]
    return f"{method} {'/'.join(parts)}" + (f"?{query.split('=')[0]}=" if query else "")


def _node_kinds(requests) -> collections.Counter[str]:
    """How many requests of each kind, the run's reads of the whole cloud left out."""
    return collections.Counter(_kind(method, path) for method, path in requests
                               if not _is_cloud_read(method, path))


def test_over_http_each_request_of_a_flat_4_gpu_node_is_one_the_api_needs(db_url, tmp_path):
    """Where a changed flat 4-GPU node's requests go, kind by kind, as the service
    counts them (docs/performance.md, "Over HTTP"): every one is a read or write
    the API offers no bulk form of. The run's reads of the whole cloud aside:

    * its inventories and its allocations: one each in the check (a flat node
      has one provider; a provider's allocation listing gives all its consumers);
    * one ``GET /allocations/{consumer}`` per moved consumer (owner, generation and
      allocations elsewhere, which the reshaper needs and no listing gives);
    * two tree listings: before the write (the tree as checked), and the
      read-back (every provider at the generation the node's writes answered
      or, after the reshaper, past the one it was sent);
    * one ``POST /resource_providers`` per child created, one traits PUT per
      provider whose traits change, one ``POST /reshaper``.

    A second run (no report shown): per provider its inventories, and the root's
    allocations, nothing else.
    """
    out = _deployment(db_url, tmp_path, gpus=4)
    with served(make_conf(db_url)) as (url, log):
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            results = migrate.Migration(client, load_hosts([out]),
                                        migrate.Settings(show=shown_simulation)).run()
            first = len(log)
            again = migrate.Migration(client, load_hosts([out]), migrate.Settings()).run()
        finally:
            client.close()
        requests = log.requests
    changed = [r for r in results if r.status == "migrated"]
    assert len(changed) == HOSTS - 1
    expected: collections.Counter[str] = collections.Counter()
    for result in changed:
        plan = result.detail.plan
        after = _providers(result.detail.tree_after, result)
        assert after == 5 and len(plan.create) == 4
        expected += collections.Counter({
            "GET /resource_providers/{id}/inventories": 1,
            "GET /resource_providers/{id}/allocations": 1,
            "GET /allocations/{id}": _moved(result.detail),
            "GET /resource_providers?in_tree=": 2,
            "POST /resource_providers": len(plan.create),
            "PUT /resource_providers/{id}/traits": len(plan.traits),
            "POST /reshaper": 1})
    assert _node_kinds(requests[:first]) == expected

    unchanged = [r for r in again if r.status == "unchanged"]
    assert len(unchanged) == HOSTS - 1
    providers = sum(_providers(r.detail.tree_after, r) for r in changed)
    assert _node_kinds(requests[first:]) == {
        "GET /resource_providers/{id}/inventories": providers,
        "GET /resource_providers/{id}/allocations": len(unchanged)}
