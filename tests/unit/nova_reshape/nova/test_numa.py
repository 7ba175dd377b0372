"""NUMA records: which host CPUs back VCPU and PCPU, and when a guest is pinned."""

from __future__ import annotations

import pytest

from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.nova.numa import HostNumaCell, InstanceNumaCell, InstanceNumaTopology


def host_cell(cpuset: set[int], pcpuset: set[int], has_pcpuset: bool = True) -> HostNumaCell:
    return HostNumaCell(0, frozenset(cpuset), 1024, frozenset(pcpuset), has_pcpuset=has_pcpuset)


def test_separate_sets_split_shared_and_dedicated():
    cell = host_cell({0, 1}, {2, 3})
    assert (cell.shared, cell.dedicated, cell.legacy_pinning) == ({0, 1}, {2, 3}, False)


def test_the_same_cpus_in_both_sets_is_legacy_pinning_on_shared_cpus():
    cell = host_cell({0, 1, 2, 3}, {0, 1, 2, 3})
    assert (cell.shared, cell.dedicated, cell.legacy_pinning) == ({0, 1, 2, 3}, set(), True)


def test_a_cell_before_pcpuset_is_legacy():
    assert host_cell({0, 1}, set(), has_pcpuset=False).legacy_pinning


@pytest.mark.parametrize(("policy", "pinning", "pinned"), [
    (CpuPolicy.DEDICATED, {}, True), (CpuPolicy.SHARED, {0: 4}, False),
    (None, {0: 4}, True), (None, {}, False)])
def test_a_guest_cell_is_pinned_by_policy_else_by_a_recorded_pinning(policy, pinning, pinned):
    cell = InstanceNumaCell(0, frozenset({0}), frozenset(), 512, cpu_policy=policy,
                            cpu_pinning=pinning)
    assert cell.pinned is pinned
    assert InstanceNumaTopology((cell,)).pinned is pinned


def test_a_guest_is_pinned_when_any_cell_is():
    shared = InstanceNumaCell(0, frozenset({0}), frozenset(), 512, cpu_policy=CpuPolicy.SHARED)
    dedicated = InstanceNumaCell(1, frozenset(), frozenset({1}), 512,
                                 cpu_policy=CpuPolicy.DEDICATED)
    assert InstanceNumaTopology((shared, dedicated)).pinned
    assert not InstanceNumaTopology(()).pinned
