"""PCPU shim: the root's VCPU/PCPU from the CPU sets; pinned guests' VCPU becomes PCPU."""

from __future__ import annotations

import pytest

from nova_reshape import exception
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.virt import root
from nova_reshape.virt.pcpu import PcpuShim
from nova_reshape.virt.releases import DriverOptions
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    I2,
    NODE,
    ROOT,
    body,
    node,
    record,
    tree_with_root,
)

FLAT = {"VCPU": record(16, allocation_ratio=4.0, reserved=1), "MEMORY_MB": record(8192),
        "DISK_GB": record(100)}


def _desc(**fields):
    return node(consumers=[{"uuid": I1, "cpu_policy": "dedicated"}, {"uuid": I2}], **fields)


def test_pinned_vcpu_becomes_pcpu_and_the_root_follows_the_sets():
    tree = tree_with_root(dict(FLAT))
    shim = PcpuShim({NODE: _desc(cpu_shared_set="0-7", cpu_dedicated_set="8-11")})
    with pytest.raises(exception.ReshapeNeeded):
        shim.update_provider_tree(tree, NODE)
    allocations = {I1: body({ROOT: {"VCPU": 4, "MEMORY_MB": 512}}),
                   I2: body({ROOT: {"VCPU": 2}})}
    shim.update_provider_tree(tree, NODE, allocations=allocations)
    assert allocations[I1]["allocations"][ROOT]["resources"] == {"PCPU": 4, "MEMORY_MB": 512}
    assert allocations[I2]["allocations"][ROOT]["resources"] == {"VCPU": 2}
    [move] = shim.moves
    assert (move.from_class, move.resource_class, move.amount) == ("VCPU", "PCPU", 4)
    inventory = tree.data(NODE).inventory
    assert inventory["VCPU"] == record(8, allocation_ratio=4.0, reserved=1)
    assert inventory["PCPU"] == record(4)
    # Once PCPU is on the root there is nothing left to reshape: a no-op.
    shim.moves = []
    shim.update_provider_tree(tree, NODE)
    assert shim.moves == [] and tree.data(NODE).inventory == inventory


def test_no_reshape_without_a_dedicated_set_or_pinned_guests():
    tree = tree_with_root(dict(FLAT))
    PcpuShim({NODE: _desc()}).update_provider_tree(tree, NODE)
    assert tree.data(NODE).inventory == FLAT
    only_shared = node(cpu_shared_set="0-7", cpu_dedicated_set="8-9")
    PcpuShim({NODE: only_shared}).update_provider_tree(tree, NODE)  # nobody pinned
    assert tree.data(NODE).inventory["PCPU"] == record(2)


def test_only_a_dedicated_set_means_no_vcpu_as_in_nova():
    tree = tree_with_root(dict(FLAT))
    PcpuShim({NODE: node(cpu_dedicated_set=[8, 9])}).update_provider_tree(tree, NODE)
    assert "VCPU" not in tree.data(NODE).inventory


def test_nova_conf_ratios_and_reservations():
    conf = NovaConf(cpu_allocation_ratio=2.0, reserved_host_cpus=2,
                    reserved_host_memory_mb=1024, reserved_host_disk_mb=1500)
    tree = tree_with_root(dict(FLAT))
    shim = PcpuShim({NODE: node(cpu_shared_set="0-7")}, DriverOptions(nova_conf=conf))
    shim.update_provider_tree(tree, NODE)
    inventory = tree.data(NODE).inventory
    assert inventory["VCPU"] == record(8, allocation_ratio=2.0, reserved=2)
    assert inventory["MEMORY_MB"] == record(8192, reserved=1024)
    assert inventory["DISK_GB"] == record(100, reserved=2)


def test_ratio_precedence():
    conf = NovaConf(ram_allocation_ratio=0.0, initial_ram_allocation_ratio=1.5)
    assert root.ratio(conf, "MEMORY_MB", None) == 1.5
    assert root.ratio(conf, "MEMORY_MB", {"allocation_ratio": 3.0}) == 3.0
    configured = NovaConf(ram_allocation_ratio=2.0)
    assert root.ratio(configured, "MEMORY_MB", {"allocation_ratio": 3.0}) == 2.0
