"""Every node's final tree in memory: the first start's root, then the migration's shape."""

from __future__ import annotations

from nova_reshape.compute import first_start, rebuilt_trees
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.releases import DriverOptions
from tests.functional.nova_reshape.compute.test_first_start import CMP, IRONIC, record

FLAT = "c0000000-0000-4000-8000-00000000000b"


def new(uuid, name, **values):
    return first_start.NewNode(record(uuid, name, **values), False, None)


NODES = [new(CMP, "cmp"), new(FLAT, "flat"), new(IRONIC, "bm", hypervisor_type="ironic")]


def test_a_described_node_takes_the_migrations_shape_the_others_stay_flat():
    described = Host("cmp.yaml", "cmp", (Node("cmp", uuid=CMP,
                                              cpu_dedicated_set=frozenset(range(8, 16)),
                                              cpu_shared_set=frozenset(range(8))),))
    found = rebuilt_trees.final_trees(NODES, [described], DriverOptions())
    assert [(item.nodename, item.root, item.host) for item in found] == [
        ("cmp", CMP, "cmp"), ("flat", FLAT, "flat")]
    cmp, flat = found
    assert cmp.reshaped and cmp.order[0] == CMP
    assert cmp.tree.data(CMP).inventory["PCPU"]["total"] == 8
    assert not flat.reshaped and flat.order == [FLAT]
    assert set(flat.tree.data(FLAT).inventory) == {"VCPU", "MEMORY_MB", "DISK_GB"}
    providers = rebuilt_trees.providers_of(cmp)
    assert [p.uuid for p in providers] == cmp.order and providers[0].parent is None
    assert "COMPUTE_NODE" in providers[0].traits


def test_a_node_the_migration_would_refuse_leaves_it_to_the_requests():
    unknown = Host("x.yaml", "x", (Node("nowhere", uuid="c0000000-0000-4000-8000-0000000000ff"),))
    assert rebuilt_trees.final_trees(NODES, [unknown], DriverOptions()) is None
