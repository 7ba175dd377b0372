"""AllHostsFilter, ComputeFilter, RetryFilter and AvailabilityZoneFilter."""

from __future__ import annotations

from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter


def test_all_hosts_filter_keeps_everything_in_order():
    assert passes("AllHostsFilter", [host("b"), host("a")]) == ["b", "a"]


def test_compute_filter_reasons():
    hosts = [host("ok"), host("off", enabled=False, disabled_reason="maintenance"),
             host("forced", forced_down=True), host("down", up=False),
             host("future", last_heartbeat_age_s=-120), host("recent", last_heartbeat_age_s=59)]
    kept, rejected = run_filter("ComputeFilter", hosts)
    assert kept == ["ok", "recent"]
    assert rejected["off"] == "compute service is disabled (maintenance)"
    assert rejected["forced"] == "compute service is forced down"
    assert "down" in rejected["down"] and "3660" in rejected["down"]
    assert "down" in rejected["future"]


def test_compute_filter_uses_service_down_time():
    hosts = [host("h1", last_heartbeat_age_s=100)]
    assert passes("ComputeFilter", hosts) == []
    assert passes("ComputeFilter", hosts, config={"DEFAULT": {"service_down_time": 120}}) == ["h1"]


def test_retry_filter_drops_tried_host_node_pairs():
    hosts = [host("h1"), host("h2", nodename="n2"), host("h2", nodename="n3")]
    request = {"retry": {"num_attempts": 2, "hosts": [["h1", "h1"], ["h2", "n3"]]}}
    kept, rejected = run_filter("RetryFilter", hosts, request=request)
    assert kept == ["h2/n2"]
    assert "already tried" in rejected["h1"]


def test_retry_filter_without_retry_passes_all():
    assert passes("RetryFilter", [host("h1")]) == ["h1"]


AZ_AGGS = [{"name": "az", "hosts": ["h1", "h2"], "metadata": {"availability_zone": "az1"}},
           {"name": "multi", "hosts": ["h3"], "metadata": {"availability_zone": "az2, az1"}}]
AZ_HOSTS = [host("h1"), host("h2"), host("h3"), host("h4")]


def test_availability_zone_filter():
    kept, rejected = run_filter("AvailabilityZoneFilter", AZ_HOSTS, aggregates=AZ_AGGS,
                                request={"availability_zone": "az1"})
    assert kept == ["h1", "h2", "h3"]
    assert "default availability zone nova" in rejected["h4"]


def test_availability_zone_filter_default_zone():
    assert passes("AvailabilityZoneFilter", AZ_HOSTS, aggregates=AZ_AGGS,
                  request={"availability_zone": "nova"}) == ["h4"]
    config = {"DEFAULT": {"default_availability_zone": "zone0"}}
    assert passes("AvailabilityZoneFilter", AZ_HOSTS, aggregates=AZ_AGGS, config=config,
                  request={"availability_zone": "zone0"}) == ["h4"]


def test_availability_zone_host_shorthand():
    hosts = [host("h1", availability_zone="az9"), host("h2")]
    assert passes("AvailabilityZoneFilter", hosts, request={"availability_zone": "az9"}) == ["h1"]


def test_availability_zone_filter_without_request_zone():
    assert passes("AvailabilityZoneFilter", AZ_HOSTS, aggregates=AZ_AGGS) == \
        ["h1", "h2", "h3", "h4"]
