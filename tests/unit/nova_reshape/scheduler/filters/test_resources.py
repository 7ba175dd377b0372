"""Legacy Aggregate{Core,Ram,Disk}Filter and the instance / I/O counters."""

from __future__ import annotations

from nova_reshape.scheduler.filters import load_filters
from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter, scenario


def test_core_filter_ratio_from_aggregate_else_host():
    hosts = [host("h1", vcpus=8, vcpus_used=6), host("h2", vcpus=8, vcpus_used=6),
             host("h3", vcpus=2, cpu_allocation_ratio=16.0), host("h4", vcpus=0)]
    aggs = [{"name": "dense", "hosts": ["h2"], "metadata": {"cpu_allocation_ratio": "4.0"}}]
    kept, rejected = run_filter("AggregateCoreFilter", hosts, aggregates=aggs,
                                request={"flavor": {"vcpus": 4}})
    assert kept == ["h2", "h4"]
    assert "2 vCPUs free" in rejected["h1"]
    assert "2 in total" in rejected["h3"]  # no overcommit against itself


def test_core_filter_invalid_aggregate_ratio_falls_back_to_host():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"cpu_allocation_ratio": "many"}}]
    assert passes("AggregateCoreFilter", [host("h1", vcpus=8, vcpus_used=6)], aggregates=aggs,
                  request={"flavor": {"vcpus": 4}}) == []


def test_core_filter_sets_vcpu_limit():
    loaded = scenario([host("h1", vcpus=8)], {"flavor": {"vcpus": 1}},
                      {"filter_scheduler": {"enabled_filters": ["AggregateCoreFilter"]}})
    (core,) = load_filters(loaded.conf)
    core.filter_all(loaded.hosts, loaded.spec)
    assert loaded.hosts[0].limits["vcpu"] == 8.0


def test_ram_filter():
    hosts = [host("h1", memory_mb=4096, memory_mb_used=3072),
             host("h2", memory_mb=4096, memory_mb_used=3072, ram_allocation_ratio=1.5),
             host("h3", memory_mb=1024, ram_allocation_ratio=10.0)]
    kept, rejected = run_filter("AggregateRamFilter", hosts,
                                request={"flavor": {"memory_mb": 2048}})
    assert kept == ["h2"]
    assert "1024 MB RAM usable" in rejected["h1"]
    assert "1024 MB in total" in rejected["h3"]


def test_disk_filter_counts_swap():
    hosts = [host("h1", local_gb=10, local_gb_used=0)]
    assert passes("AggregateDiskFilter", hosts,
                  request={"flavor": {"root_gb": 10, "swap": 0}}) == ["h1"]
    kept, rejected = run_filter("AggregateDiskFilter", hosts,
                                request={"flavor": {"root_gb": 10, "swap": 1}})
    assert kept == [] and "10241 MB" in rejected["h1"]


def test_disk_filter_with_aggregate_ratio():
    hosts = [host("h1", local_gb=10, local_gb_used=8)]
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"disk_allocation_ratio": "2.0"}}]
    assert passes("AggregateDiskFilter", hosts, request={"flavor": {"root_gb": 5}}) == []
    assert passes("AggregateDiskFilter", hosts, aggregates=aggs,
                  request={"flavor": {"root_gb": 5}}) == ["h1"]


def test_num_instances_is_strictly_below_maximum():
    hosts = [host("h1", num_instances=49), host("h2", num_instances=50)]
    kept, rejected = run_filter("NumInstancesFilter", hosts)
    assert kept == ["h1"] and rejected["h2"] == "50 instances, the maximum is 50"
    config = {"filter_scheduler": {"max_instances_per_host": 60}}
    assert passes("NumInstancesFilter", hosts, config=config) == ["h1", "h2"]


def test_num_instances_comes_from_stats_not_instance_list():
    hosts = [host("h1", num_instances=1, instances=["a", "b", "c"])]
    assert passes("NumInstancesFilter", hosts,
                  config={"filter_scheduler": {"max_instances_per_host": 2}}) == ["h1"]


def test_aggregate_num_instances_minimum_and_invalid_values():
    hosts = [host("h1", num_instances=5), host("h2", num_instances=5),
             host("h3", num_instances=5)]
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"max_instances_per_host": "10"}},
            {"name": "b", "hosts": ["h1"], "metadata": {"max_instances_per_host": "5"}},
            {"name": "c", "hosts": ["h2"], "metadata": {"max_instances_per_host": "2.5"}}]
    config = {"filter_scheduler": {"max_instances_per_host": 6}}
    # h1: min(10, 5) = 5 -> fails; h2: "2.5" is not an int -> default 6 -> passes
    assert passes("AggregateNumInstancesFilter", hosts, aggregates=aggs,
                  config=config) == ["h2", "h3"]


def test_io_ops_filters():
    hosts = [host("h1", num_io_ops=7), host("h2", num_io_ops=8)]
    assert passes("IoOpsFilter", hosts) == ["h1"]
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"max_io_ops_per_host": "3"}}]
    assert passes("AggregateIoOpsFilter", hosts, aggregates=aggs) == []
    aggs = [{"name": "a", "hosts": ["h2"], "metadata": {"max_io_ops_per_host": "20"}}]
    assert passes("AggregateIoOpsFilter", hosts, aggregates=aggs) == ["h1", "h2"]
