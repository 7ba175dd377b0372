"""Bulk tree reads give exactly what the report client reads per node through the API.

A generated deployment, half of it migrated (nested trees, custom classes,
owner traits), plus a sharing provider in a node's aggregate and a consumer
spread over two nodes, read both ways on every enabled engine.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape.compute import migrate
from nova_reshape.compute.tree_source import node_states
from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport import open_direct
from nova_reshape.virt.host import load_hosts
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape.migrate_helpers import generate_rows, ok

HOSTS = 6


def _provider(placement, name: str, parent: str | None = None) -> str:
    body = {"name": name, "uuid": str(uuid.uuid4())}
    if parent:
        body["parent_provider_uuid"] = parent
    return ok(placement.post("/resource_providers", json=body, microversion="1.20"))["uuid"]


def _generation(placement, rp: str) -> int:
    return ok(placement.get(f"/resource_providers/{rp}", microversion="1.14"))["generation"]


def _sharing_and_spread(placement, roots: list[str]) -> None:
    """A sharing provider in the first node's aggregate; a consumer on two flat nodes."""
    aggregate = str(uuid.uuid4())
    sharing = _provider(placement, "shared-storage")
    ok(placement.put(f"/resource_providers/{sharing}/inventories", json={
        "resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 1000}}},
        microversion="1.26"))
    ok(placement.put(f"/resource_providers/{sharing}/traits", json={
        "resource_provider_generation": _generation(placement, sharing),
        "traits": ["MISC_SHARES_VIA_AGGREGATE"]}, microversion="1.6"))
    for rp in (sharing, roots[0]):
        ok(placement.put(f"/resource_providers/{rp}/aggregates", json={
            "resource_provider_generation": _generation(placement, rp),
            "aggregates": [aggregate]}, microversion="1.19"))
    ok(placement.put(f"/allocations/{uuid.uuid4()}", json={
        "allocations": {roots[1]: {"resources": {"VCPU": 1}},
                        roots[3]: {"resources": {"VCPU": 2}},
                        sharing: {"resources": {"DISK_GB": 10}}},
        "project_id": "p", "user_id": "u", "consumer_generation": None},
        microversion="1.28"))


@pytest.fixture
def deployment(db_url, tmp_path):
    """Root uuids and node names of a half-migrated deployment on ``db_url``."""
    out = str(tmp_path / "hosts")
    generate_rows(db_url, out, HOSTS, gpus=2, instances=3, ironic=1)
    mine = {f"cmp-{index:04d}" for index in range(0, HOSTS, 2)}
    with open_direct(make_conf(db_url)) as placement:  # in-process: one write per node
        results = migrate.Migration(placement, load_hosts([out]), only=mine).run()
        assert migrate.summarize(results) == {"migrated": len(mine)}
        listing = ok(placement.get("/resource_providers", microversion="1.14"))
        roots = {p["name"]: p["uuid"] for p in listing["resource_providers"]
                 if p["parent_provider_uuid"] is None}
        names = sorted(name for name in roots if name.startswith("cmp-"))
        _sharing_and_spread(placement, [roots[name] for name in names])
    return [(roots[name], name) for name in names]


def _shape(tree) -> dict:
    """Everything a ProviderTree holds, per provider."""
    shape = {}
    for rp in tree.get_provider_uuids():
        data = tree.data(rp)
        shape[rp] = (data.name, data.parent_uuid, data.generation, data.inventory,
                     sorted(data.traits), sorted(data.aggregates))
    return shape


def _per_node(placement, root: str, name: str):
    report = SchedulerReportClient(placement)
    tree = report.get_provider_tree_and_ensure_root(None, root, name=name)
    return tree, report.get_allocations_for_provider_tree(None, name)


#: Batch sizes of the bulk reads compared: one tree a batch, batches cut in the
#: middle of the deployment, all in one.
BATCH_SIZES = (1, 4, 200)


def test_bulk_read_equals_the_per_node_api_reads(db_url, deployment):
    """At every batch size (the deployment, read only, is shared by them)."""
    roots = [root for root, _ in deployment]
    with open_direct(make_conf(db_url)) as placement:
        per_node = [_per_node(placement, root, name) for root, name in deployment]
        for batch_size in BATCH_SIZES:
            states = list(node_states(placement, roots, batch_size=batch_size))
            assert [state.root for state in states] == roots, batch_size
            for state, (tree, allocations) in zip(states, per_node, strict=True):
                assert _shape(state.tree) == _shape(tree), batch_size
                assert [p.uuid for p in state.tree.roots] == [p.uuid for p in tree.roots]
                assert state.allocations == allocations, batch_size
                assert list(state.allocations) == list(allocations), batch_size
    # what makes the comparison meaningful: nested trees, sharing, spread consumers
    first = states[0]
    assert any(state.tree.data(state.root).inventory != {} and
               len(state.tree.get_provider_uuids(state.root)) > 1 for state in states)
    assert any(p.name == "shared-storage" for p in first.tree.roots)
    spread = set(states[1].allocations) & set(states[3].allocations)
    assert len(spread) == 1


def test_every_root_by_default_and_unknown_roots_skipped(db_url, deployment):
    with open_direct(make_conf(db_url)) as placement:
        everything = [state.root for state in node_states(placement, batch_size=2)]
        listing = ok(placement.get("/resource_providers", microversion="1.14"))
        expected = [p["uuid"] for p in listing["resource_providers"]
                    if p["parent_provider_uuid"] is None]
        assert everything == expected  # every root (ironic and sharing ones too), id order
        child = next(p["uuid"] for p in listing["resource_providers"]
                     if p["parent_provider_uuid"] is not None)
        asked = [deployment[1][0], str(uuid.uuid4()), child, deployment[0][0]]
        assert [state.root for state in node_states(placement, asked)] == [
            deployment[1][0], deployment[0][0]]


def test_bulk_reads_need_an_open_direct(db_url):
    direct = PlacementDirect(make_conf(db_url))
    with pytest.raises(RuntimeError):
        direct.read_trees()
    with pytest.raises(ValueError):
        with direct:
            list(direct.read_trees(batch_size=0))
