"""The count of one host: Placement room per provider, filters again before every claim."""

from __future__ import annotations

import time

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.capacity.fit import (
    TreeRoom,
    Way,
    blind_to_claims,
    count,
    count_fits,
    count_in_room,
    numa_slots,
    prepare_checks,
    way_of,
)
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.filters.base import BaseHostFilter
from nova_reshape.scheduler.filters.core import ComputeFilter
from nova_reshape.scheduler.live.request import spec_for_flavor
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.scenario import build_host_state
from tests.unit.nova_reshape.scheduler.helpers import NOW

SUMMARIES = {
    "root": {"resources": {"VCPU": {"capacity": 16, "used": 2},
                           "MEMORY_MB": {"capacity": 8192, "used": 0}}},
    "gpu0": {"resources": {"VGPU": {"capacity": 4, "used": 1}}},
    "gpu1": {"resources": {"VGPU": {"capacity": 2, "used": 0}}},
}


def candidate(gpu: str, vgpus: int = 1) -> dict:
    return {"allocations": {"root": {"resources": {"VCPU": 1, "MEMORY_MB": 512}},
                            gpu: {"resources": {"VGPU": vgpus}}}, "mappings": {}}


def test_room_is_capacity_less_used_less_claimed():
    room = TreeRoom(SUMMARIES)
    assert room.free("gpu0", "VGPU") == 3 and room.free("gpu0", "PCPU") == 0
    room.claim(candidate("gpu0", 2))
    assert room.free("gpu0", "VGPU") == 1 and room.free("root", "VCPU") == 13
    assert room.fits(candidate("gpu0")) and not room.fits(candidate("gpu0", 2))


def test_multi_create_fills_both_children_one_class_from_one_provider():
    spec = spec_for_flavor(Flavor("g", 1, 512), SchedulerConfig())
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192}, now=NOW)
    two_each = [candidate("gpu0", 2), candidate("gpu1", 2)]
    # gpu0 has 3 free (one pair), gpu1 2 free (one pair): a pair never spans both
    assert count_fits(host, two_each, spec, [],
                      TreeRoom(SUMMARIES)) == 2
    one_each = [candidate("gpu0"), candidate("gpu1")]
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192}, now=NOW)
    assert count_fits(host, one_each, spec, [],
                      TreeRoom(SUMMARIES)) == 5


def test_filters_run_again_before_every_claim():
    conf = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NumInstancesFilter"],
                                                 "max_instances_per_host": 3}})
    spec = spec_for_flavor(Flavor("g", 1, 512), conf)
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192,
                             "num_instances": 1}, now=NOW)
    checks = prepare_checks(FilterScheduler(conf).filters, spec)
    assert count_fits(host, [candidate("gpu0"), candidate("gpu1")], spec, checks,
                      TreeRoom(SUMMARIES)) == 2
    assert host.num_instances == 3


def test_pinned_guests_counted_by_free_dedicated_cpus():
    conf = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NUMATopologyFilter"]}})
    spec = spec_for_flavor(Flavor("p", 2, 512, extra_specs={"hw:cpu_policy": "dedicated"}),
                           conf)
    topology = {"cells": [{"id": 0, "cpuset": [0, 1, 2, 3, 4, 5], "pcpuset": [0, 1, 2, 3, 4],
                           "memory": 8192}]}
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192,
                             "numa_topology": topology}, now=NOW)
    vcpu_only = [{"allocations": {"root": {"resources": {"VCPU": 2}}}, "mappings": {}}]
    # Placement alone would take 7 (14 VCPU free); five dedicated CPUs take two guests
    checks = prepare_checks(FilterScheduler(conf).filters, spec)
    assert count_fits(host, vcpu_only, spec, checks, TreeRoom(SUMMARIES)) == 2


def test_a_third_party_filter_is_asked_per_boot():
    class EveryOther(BaseHostFilter):
        def host_passes(self, host_state, spec_obj):
            return host_state.num_instances < 2

    spec = spec_for_flavor(Flavor("g", 1, 512), SchedulerConfig())
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192}, now=NOW)
    checks = prepare_checks([EveryOther()], spec)
    assert count_fits(host, [candidate("gpu0"), candidate("gpu1")], spec, checks,
                      TreeRoom(SUMMARIES)) == 2


def test_room_counts_claims_in_a_row():
    room = TreeRoom(SUMMARIES)
    # gpu0: 3 VGPU free, root: 14 VCPU and 8192 MB: three claims of one VGPU
    assert room.times(candidate("gpu0"), 100) == 3
    assert room.times(candidate("gpu0"), 2) == 2
    assert room.times(candidate("gpu0", 2), 100) == 1
    room.claim(candidate("gpu0"), 3)
    assert room.free("gpu0", "VGPU") == 0 and room.times(candidate("gpu0"), 100) == 0
    nothing = {"allocations": {"root": {"resources": {"VCPU": 0}}}}
    assert room.times(nothing, 7) == 7


def test_the_closed_count_is_the_loop_s_when_no_check_can_change():
    conf = SchedulerConfig()   # nova's default filters: none reads what a claim changes
    spec = spec_for_flavor(Flavor("g", 1, 512), conf)
    filters = FilterScheduler(conf).filters
    assert blind_to_claims(filters, spec)
    checks = prepare_checks(filters, spec)
    for candidates in ([candidate("gpu0"), candidate("gpu1")],
                       [candidate("gpu1", 2), candidate("gpu0")],
                       [candidate("gpu0", 2), candidate("gpu1", 2)]):
        # ComputeFilter's check judges the heartbeat by the clock
        host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192},
                                now=time.time())
        looped = count_fits(host.fork(), candidates, spec, checks, TreeRoom(SUMMARIES))
        assert count_in_room(host, candidates, checks, TreeRoom(SUMMARIES)) == looped
    assert looped == 2


def test_filters_that_read_what_a_claim_changes_need_the_loop():
    pinned = Flavor("p", 2, 512, extra_specs={"hw:cpu_policy": "dedicated"})
    numa = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NUMATopologyFilter"]}})
    assert not blind_to_claims(FilterScheduler(numa).filters, spec_for_flavor(pinned, numa))
    # the same filter without a check for an unpinned flavor
    assert blind_to_claims(FilterScheduler(numa).filters,
                           spec_for_flavor(Flavor("g", 1, 512), numa))
    counted = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NumInstancesFilter"]}})
    assert not blind_to_claims(FilterScheduler(counted).filters,
                               spec_for_flavor(Flavor("g", 1, 512), counted))

    class Subclass(ComputeFilter):
        pass

    # a subclass may read anything: only the listed classes themselves are trusted
    subclass = Subclass()
    subclass.conf = SchedulerConfig()
    assert not blind_to_claims([subclass],
                               spec_for_flavor(Flavor("g", 1, 512), SchedulerConfig()))


NUMA_ONLY = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["ComputeFilter",
                                                                      "NUMATopologyFilter"]}})


def pinned_spec(vcpus: int, **specs: str):
    return spec_for_flavor(Flavor("p", vcpus, 1024, extra_specs={
        "hw:cpu_policy": "dedicated", **specs}), NUMA_ONLY)


def test_the_way_of_a_flavor():
    filters = FilterScheduler(NUMA_ONLY).filters
    assert way_of(filters, spec_for_flavor(Flavor("g", 1, 512), NUMA_ONLY)) is Way.ROOM
    assert way_of(filters, pinned_spec(2)) is Way.NUMA_SLOTS
    # SMT required, two guest cells: the loop
    assert way_of(filters, pinned_spec(2, **{"hw:cpu_thread_policy": "require"})) is Way.LOOP
    assert way_of(filters, pinned_spec(2, **{"hw:numa_nodes": "2"})) is Way.LOOP


def test_numa_slots_per_cell_by_free_dedicated_cpus_and_memory():
    topology = {"cells": [
        {"id": 0, "cpuset": [0], "pcpuset": [1, 2, 3, 4, 5], "memory": 8192,
         "pinned_cpus": [1]},                           # 4 free: two guests of 2
        {"id": 1, "cpuset": [6], "pcpuset": [7, 8, 9, 10, 11, 12], "memory": 2048},
        {"id": 2, "cpuset": [13], "pcpuset": [14], "memory": 8192}]}   # too few CPUs
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 32768,
                             "numa_topology": topology}, now=NOW)
    assert numa_slots(host, pinned_spec(2)) == 2 + 2     # cell 1: memory for two
    assert numa_slots(build_host_state({"host": "flat"}, now=NOW), pinned_spec(2)) == 0
    overlapping = {"cells": [{"id": 0, "pcpuset": [0, 1, 2], "memory": 4096,
                              "siblings": [[0, 1], [1, 2]]}]}
    assert numa_slots(build_host_state({"host": "odd", "numa_topology": overlapping},
                                       now=NOW), pinned_spec(1)) is None


def test_numa_slots_give_the_loop_s_count():
    topology = {"cells": [{"id": 0, "cpuset": [0], "pcpuset": [1, 2, 3, 4, 5], "memory": 8192},
                          {"id": 1, "cpuset": [6], "pcpuset": [7, 8, 9], "memory": 8192}]}
    spec = pinned_spec(2)
    checks = prepare_checks(FilterScheduler(NUMA_ONLY).filters, spec)
    vcpu = [{"allocations": {"root": {"resources": {"VCPU": 2}}}, "mappings": {}}]
    for vcpus in (16, 4):    # NUMA bounds it (3), then Placement does (2)
        host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192,
                                 "numa_topology": topology}, now=time.time())
        summaries = {"root": {"resources": {"VCPU": {"capacity": vcpus, "used": 0}}}}
        looped = count(host, vcpu, spec, checks, TreeRoom(summaries), Way.LOOP)
        assert count(host, vcpu, spec, checks, TreeRoom(summaries), Way.NUMA_SLOTS) == looped
        assert looped == min(3, vcpus // 2)


def test_a_host_that_passed_its_checks_is_not_checked_again_before_the_first_claim():
    spec = spec_for_flavor(Flavor("g", 1, 512), SchedulerConfig())
    host = build_host_state({"host": "cmp", "vcpus": 16, "memory_mb": 8192}, now=NOW)
    asked = []

    def refusing(state):
        asked.append(state)
        return False

    one_each = [candidate("gpu0"), candidate("gpu1")]
    assert count(host, one_each, spec, [refusing], TreeRoom(SUMMARIES), Way.ROOM) == 0
    assert len(asked) == 1
    # the filter pass already passed it: the same checks' verdict is known
    assert count(host, one_each, spec, [refusing], TreeRoom(SUMMARIES), Way.ROOM,
                 passed=True) == 5
    assert len(asked) == 1
    # the loop checks before every claim, the first one too
    assert count(host, one_each, spec, [refusing], TreeRoom(SUMMARIES), Way.LOOP,
                 passed=True) == 0
    assert len(asked) == 2
