"""FilterScheduler: pre-filter, chain, per-instance loop, plug-ins and errors."""

from __future__ import annotations

import random

import pytest

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import NoValidHost, PluginNotFound, ScenarioError
from nova_reshape.scheduler.filters import load_filters
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.result import result_to_dict
from tests.unit.nova_reshape.scheduler.helpers import host, scenario, schedule

THIRD = "tests.unit.nova_reshape.scheduler.thirdparty"


def _run(hosts, request=None, filters=("AllHostsFilter",), weighers=("RAMWeigher",),
         aggregates=None, **options):
    config = {"filter_scheduler": dict({"enabled_filters": list(filters),
                                        "weight_classes": list(weighers)}, **options)}
    return result_to_dict(schedule(hosts, request, config, aggregates))


def _hosts(*names, **fields):
    return [host(name, **fields) for name in names]


def test_requested_destination_keeps_only_that_host_and_node():
    hosts = [host("h1", nodename="n1"), host("h1", nodename="n2"), host("h2")]
    out = _run(hosts, {"requested_destination": {"host": "h1"}})
    assert out["instances"][0]["candidates"] == ["h1/n1", "h1/n2"]
    out = _run(hosts, {"requested_destination": {"host": "h1", "node": "n2"}})
    assert out["instances"][0]["candidates"] == ["h1/n2"]


def test_ignore_hosts_is_case_insensitive_and_removes_every_node():
    hosts = [host("H1", nodename="n1"), host("h1", nodename="n2"), host("h2")]
    out = _run(hosts, {"ignore_hosts": ["h1"]})
    assert out["instances"][0]["candidates"] == ["h2"]


def test_ignoring_everything_gives_no_valid_host_without_running_filters():
    out = _run(_hosts("h1"), {"ignore_hosts": ["h1"]})
    assert out["no_valid_host"] is True
    assert out["instances"][0]["candidates"] == [] and out["instances"][0]["filters"] == []


def test_forced_hosts_skip_every_filter():
    hosts = [host("h1", enabled=False), host("h2"), host("h3")]
    out = _run(hosts, {"force_hosts": ["H1", "h3"]}, filters=["ComputeFilter"])
    first = out["instances"][0]
    assert first["forced"] is True and first["candidates"] is None
    assert first["filters"] == [] and first["passed"] == ["h1", "h3"]


def test_force_hosts_and_force_nodes_both_apply():
    hosts = [host("h1", nodename="n1"), host("h1", nodename="n2"), host("h2", nodename="n1")]
    out = _run(hosts, {"force_hosts": ["h1"], "force_nodes": ["n1"]})
    assert out["instances"][0]["passed"] == ["h1/n1"]


def test_forcing_with_check_type_still_runs_filters():
    hosts = [host("h1", enabled=False), host("h2")]
    out = _run(hosts, {"force_hosts": ["h1", "h2"], "rebuild": True},
               filters=["ComputeFilter", "ImagePropertiesFilter"])
    first = out["instances"][0]
    assert first["forced"] is False and first["candidates"] == ["h1", "h2"]
    # rebuild: ComputeFilter does not have RUN_ON_REBUILD, so it passes everything
    assert first["filters"][0] == {"name": "ComputeFilter", "hosts": ["h1", "h2"]}


def test_forced_hosts_matching_nothing_skip_the_filters_and_find_no_host():
    """nova 34 returns ``[]`` at once when forcing matched nothing: no filter runs."""
    out = _run(_hosts("h1"), {"force_hosts": ["zz"]}, filters=["AllHostsFilter", "JsonFilter"])
    first = out["instances"][0]
    assert first["forced"] is True and first["candidates"] is None
    assert first["filters"] == []
    assert first["passed"] == []
    assert out["no_valid_host"] is True


def test_chain_stops_at_the_first_filter_that_empties_the_list():
    out = _run(_hosts("h1", enabled=False), filters=["ComputeFilter", "AllHostsFilter"])
    assert out["instances"][0]["filters"] == [{"name": "ComputeFilter", "hosts": []}]
    assert out["no_valid_host"] is True and out["selected"] == []


def test_same_filter_named_twice_runs_twice():
    out = _run(_hosts("h1", "h2"), filters=["AllHostsFilter", "AllHostsFilter"])
    assert [f["name"] for f in out["instances"][0]["filters"]] == ["AllHostsFilter"] * 2
    conf = SchedulerConfig({"filter_scheduler": {"enabled_filters": ["JsonFilter",
                                                                     "JsonFilter"]}})
    first, second = load_filters(conf)
    assert first is second


def test_run_once_filters_are_skipped_after_the_first_instance():
    out = _run(_hosts("h1", "h2", "h3"), {"num_instances": 2},
               filters=["ComputeFilter", "NumInstancesFilter"])
    second = out["instances"][1]["filters"]
    assert second[0] == {"name": "ComputeFilter", "skipped": True, "hosts": ["h1", "h2", "h3"]}
    assert "skipped" not in second[1]


def test_multi_create_consumes_and_starts_from_the_previous_order():
    hosts = [host("h1", memory_mb=4096), host("h2", memory_mb=3072), host("h3", memory_mb=1024)]
    out = _run(hosts, {"num_instances": 3, "flavor": {"memory_mb": 2048}},
               filters=["AggregateRamFilter"])
    assert out["selected"] == ["h1", "h2", "h1"]
    assert out["instances"][1]["candidates"] == ["h1", "h2"]
    assert out["instances"][2]["candidates"] == ["h2", "h1"]


def test_consume_from_request_does_not_count_swap():
    loaded = scenario([host("h1", local_gb=10, vcpus_used=1, num_io_ops=2)],
                      {"flavor": {"vcpus": 2, "memory_mb": 512, "root_gb": 1, "ephemeral_gb": 1,
                                  "swap": 4096}})
    state = loaded.hosts[0]
    before = (state.free_ram_mb, state.free_disk_mb)
    state.consume_from_request(loaded.spec)
    assert (state.free_ram_mb, state.free_disk_mb) == (before[0] - 512, before[1] - 2048)
    assert (state.vcpus_used, state.num_instances, state.num_io_ops) == (3, 1, 3)


def test_consume_applies_numa_and_pci_usage():
    topo = {"cells": [{"id": 0, "cpuset": [], "pcpuset": [0, 1, 2, 3], "memory": 4096}]}
    pool = {"vendor_id": "8086", "product_id": "1", "numa_node": 0, "count": 2}
    loaded = scenario([host("h1", numa_topology=topo, pci_device_pools=[pool])],
                      {"flavor": {"vcpus": 2, "memory_mb": 1024,
                                  "extra_specs": {"hw:cpu_policy": "dedicated"}},
                       "pci_requests": [{"count": 1, "spec": [{"vendor_id": "8086"}]}]})
    state = loaded.hosts[0]
    state.consume_from_request(loaded.spec)
    cell = state.numa_topology.cells[0]
    assert len(cell.pinned_cpus) == 2 and cell.memory_usage == 1024
    assert state.pci_stats.free_count() == 1


def test_server_group_consumption_feeds_the_next_instance():
    out = _run(_hosts("h1", "h2"),
               {"num_instances": 2, "instance_uuids": ["u1", "u2"],
                "instance_group": {"policy": "affinity", "members": ["u1", "u2"]}},
               filters=["ServerGroupAffinityFilter"], weighers=["NumInstancesWeigher"])
    assert out["selected"] == ["h1", "h1"]
    assert out["instances"][1]["filters"][0]["hosts"] == ["h1"]


def test_host_subset_size_and_subset_choices():
    hosts = [host("h1", memory_mb=4000), host("h2", memory_mb=3000), host("h3", memory_mb=2000)]
    out = _run(hosts, {"subset_choices": [1]}, host_subset_size=2)
    first = out["instances"][0]
    assert first["subset"] == ["h1", "h2"] and first["selected"] == "h2"
    out = _run(hosts, {"subset_choices": [5]}, host_subset_size=10)
    assert out["selected"] == ["h3"]  # 5 % 3


def test_random_choice_and_shuffle_of_tied_best_hosts_with_an_rng():
    loaded = scenario(_hosts("h1", "h2", "h3", "h4"), {}, {"filter_scheduler": {
        "enabled_filters": ["AllHostsFilter"], "weight_classes": ["RAMWeigher"],
        "shuffle_best_same_weighed_hosts": True}})
    scheduler = FilterScheduler(loaded.conf, now=loaded.now)
    picks = {scheduler.schedule(loaded.hosts, loaded.spec, ["u"],
                                rng=random.Random(seed)).selected[0].host for seed in range(30)}
    assert len(picks) > 1 and picks <= {"h1", "h2", "h3", "h4"}


def test_filter_exception_is_reported_with_stage_and_filter():
    out = _run(_hosts("h1", "h2"), {"num_instances": 2, "flavor": {"extra_specs": {
        "capabilities:hypervisor_type": ">= 3"}}}, filters=["AllHostsFilter",
                                                            "ComputeCapabilitiesFilter"])
    assert out["error"] == {"stage": "filter", "filter": "ComputeCapabilitiesFilter",
                            "type": "ValueError", "message": out["error"]["message"],
                            "instance_index": 0}
    assert len(out["instances"]) == 1


def test_select_destinations_raises_no_valid_host_with_the_emptying_filter():
    loaded = scenario([host("h1", enabled=False), host("h2", num_instances=50)], {}, {
        "filter_scheduler": {"enabled_filters": ["ComputeFilter", "NumInstancesFilter",
                                                 "AllHostsFilter"]}})
    scheduler = FilterScheduler(loaded.conf, now=loaded.now)
    with pytest.raises(NoValidHost) as caught:
        scheduler.select_destinations(loaded.hosts, loaded.spec, loaded.instance_uuids)
    assert caught.value.filter_name == "NumInstancesFilter"
    assert caught.value.reasons == {
        "h1": "ComputeFilter: compute service is disabled",
        "h2": "NumInstancesFilter: 50 instances, the maximum is 50"}


def test_select_destinations_returns_hosts():
    loaded = scenario([host("h1"), host("h2", memory_mb=32768)], {"num_instances": 2})
    scheduler = FilterScheduler(loaded.conf, now=loaded.now)
    chosen = scheduler.select_destinations(loaded.hosts, loaded.spec, loaded.instance_uuids,
                                           rng=random.Random(0))
    # h2 has more RAM, but after the first instance its I/O counter (IoOpsWeigher,
    # multiplier -1) and used resources make h1 the better second choice.
    assert [h.host for h in chosen] == ["h2", "h1"]


def test_third_party_filters_by_dotted_path():
    hosts = [host("h1", stats={"rack": "r1"}), host("h2", stats={"rack": "r1"}),
             host("h3", stats={"rack": "r2"})]
    config = {"filter_scheduler": {
        "available_filters": ["nova.scheduler.filters.all_filters", f"{THIRD}.my_filters"],
        "enabled_filters": ["ComputeFilter", "RackFilter", "OddNameFilter"],
        "weight_classes": [f"{THIRD}.NameLengthWeigher"]}}
    result = schedule(hosts, {}, config)
    first = result.instances[0]
    assert [h.label for h in first.passed] == ["h1"]
    assert first.reasons() == {"h3": "RackFilter: host is in rack r2",
                               "h2": "OddNameFilter: rejected by OddNameFilter"}


def test_enabled_filter_must_be_available():
    config = {"filter_scheduler": {"available_filters": [f"{THIRD}.OddNameFilter"],
                                   "enabled_filters": ["ComputeFilter"]}}
    with pytest.raises(PluginNotFound, match="ComputeFilter"):
        load_filters(SchedulerConfig(config))


@pytest.mark.parametrize("path", ["nowhere.Filter", "json.NotThere", "Plain"])
def test_unloadable_filter_paths(path):
    config = {"filter_scheduler": {"available_filters": [path]}}
    with pytest.raises(PluginNotFound):
        load_filters(SchedulerConfig(config))


def test_unknown_enabled_filter():
    with pytest.raises(PluginNotFound, match="Filter NoSuchFilter not found"):
        load_filters(SchedulerConfig({"filter_scheduler": {"enabled_filters": ["NoSuchFilter"]}}))


def test_base_filter_without_host_passes_is_an_error():
    from nova_reshape.scheduler.filters import BaseHostFilter

    loaded = scenario([host("h1")])
    with pytest.raises(NotImplementedError):
        BaseHostFilter().host_passes(loaded.hosts[0], loaded.spec)


def test_builtin_host_passes_matches_filter_all():
    loaded = scenario([host("h1", enabled=False), host("h2")])
    (compute,) = [f for f in load_filters(loaded.conf) if f.name == "ComputeFilter"]
    compute.now = loaded.now
    verdicts = [bool(compute.host_passes(h, loaded.spec)) for h in loaded.hosts]
    assert verdicts == [False, True]
    assert compute.host_passes(loaded.hosts[0], loaded.spec).reason == \
        "compute service is disabled"


@pytest.mark.parametrize(("document", "message"), [
    ({"hosts": [], "bogus": 1}, "unknown key(s) in scenario: bogus"),
    ({"format": "scheduler-scenario/9"}, "unsupported format"),
    ({"hosts": [{"host": "h1", "vcpu": 4}]}, "unknown key(s) in hosts[0]: vcpu"),
    ({"hosts": [{"host": "h1"}, {"host": "h1"}]}, "duplicate host/nodename h1"),
    ({"hosts": [{"nodename": "x"}]}, "'host' is required"),
    ({"hosts": [{"host": "h1", "vcpus": "8"}]}, "must be an integer"),
    ({"hosts": [{"host": "h1", "metrics": {"cpu.bogus": 1}}]}, "unknown metric"),
    ({"hosts": [{"host": "h1", "supported_instances": [["x86_64", "kvm", "weird"]]}]},
     "invalid vm mode"),
    ({"request": {"flavor": {"vcpu": 1}}}, "unknown key(s) in request.flavor: vcpu"),
    ({"request": {"num_instances": 2, "instance_uuids": ["a"]}}, "has 1 entries"),
    ({"config": {"filter_scheduler": {"host_subset_size": 0}}}, "host_subset_size"),
    ({"config": {"filter_scheduler": {"ram_weight_multipler": 2}}}, "ram_weight_multipler"),
    ({"request": {"flavor": {"vcpus": 3, "memory_mb": 1024,
                             "extra_specs": {"hw:numa_nodes": "2"}}}}, "evenly"),
])
def test_invalid_scenarios_are_rejected_with_a_clear_message(document, message):
    from nova_reshape.scheduler.scenario import load_scenario

    with pytest.raises(ScenarioError) as caught:
        load_scenario(document)
    assert message in str(caught.value)


def test_rebuild_runs_only_run_on_rebuild_filters():
    hosts = [host("h1", enabled=False), host("h2", enabled=False), host("h3")]
    request = {"rebuild": True, "image": {"id": "11111111-2222-4333-8444-555555555555"}}
    out = _run(hosts, request, filters=["ComputeFilter", "IsolatedHostsFilter", "RetryFilter"],
               isolated_hosts=["h2"])
    steps = {f["name"]: f["hosts"] for f in out["instances"][0]["filters"]}
    assert steps["ComputeFilter"] == ["h1", "h2", "h3"]
    assert steps["IsolatedHostsFilter"] == ["h1", "h3"]
    assert out["instances"][0]["passed"] == ["h1", "h3"]


def test_select_destinations_reraises_the_filter_exception():
    loaded = scenario([host("h1")], {"scheduler_hints": {"query": ["~"]}},
                      {"filter_scheduler": {"enabled_filters": ["JsonFilter"]}})
    with pytest.raises(KeyError):
        FilterScheduler(loaded.conf).select_destinations(loaded.hosts, loaded.spec, ["u"])


def test_prefilter_reasons_are_recorded():
    result = schedule([host("h1"), host("h2"), host("h3")],
                      {"ignore_hosts": ["h1"], "force_hosts": ["h2"], "rebuild": True})
    assert result.instances[0].reasons() == {"h1": "pre-filter: in ignore_hosts",
                                             "h3": "pre-filter: not in force_hosts"}
