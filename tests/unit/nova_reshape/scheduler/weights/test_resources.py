"""The resource weighers: free RAM, vCPUs and disk, I/O, instances, versions, failures."""

from __future__ import annotations

import pytest

from tests.unit.nova_reshape.scheduler.helpers import host
from tests.unit.nova_reshape.scheduler.weights.helpers import column, cpu_hosts, weigh, weights


def test_cpu_weigher_divides_by_the_maximum():
    out = weigh(cpu_hosts(), ["CPUWeigher"])
    norm = column(out, "CPUWeigher")
    assert [norm[f"h{i}"] for i in range(10)] == pytest.approx(
        [0.25, 0.25, 0.5, 0.5, 0.75, 1, 1, 0.75, 0.5, 0.25])


@pytest.mark.parametrize("weigher", ["RAMWeigher", "DiskWeigher"])
def test_equal_positive_values_normalize_to_one_for_minval_zero_weighers(weigher):
    out = weigh([host("h1"), host("h2")], [weigher])
    assert set(column(out, weigher).values()) == {1.0}


def test_all_zero_values_normalize_to_zero():
    out = weigh([host("h1"), host("h2")], ["IoOpsWeigher"])
    assert set(column(out, "IoOpsWeigher").values()) == {0.0}


def test_negative_free_ram_is_clamped_to_zero():
    out = weigh([host("h1", free_ram_mb=-512), host("h2", free_ram_mb=1024)], ["RAMWeigher"])
    assert column(out, "RAMWeigher", "raw") == {"h1": 0, "h2": 1024}
    assert column(out, "RAMWeigher") == {"h1": 0.0, "h2": 1.0}


def test_io_ops_weigher_prefers_idle_hosts():
    out = weigh([host("busy", num_io_ops=4), host("idle")], ["IoOpsWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["idle", "busy"]
    assert weights(out)["busy"] == -1.0


def test_disk_weigher_uses_disk_available_least():
    out = weigh([host("h1", local_gb=100, disk_available_least=10), host("h2", local_gb=20)],
                 ["DiskWeigher"])
    assert column(out, "DiskWeigher", "raw") == {"h1": 10240, "h2": 20480}


def test_num_instances_weigher_default_multiplier_is_zero():
    out = weigh([host("h1", num_instances=1), host("h2", num_instances=9)],
                 ["NumInstancesWeigher"])
    assert weights(out) == {"h1": 0.0, "h2": 0.0}
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["h1", "h2"]


def test_hypervisor_version_weigher():
    out = weigh([host("old", hypervisor_version=6000000), host("new", hypervisor_version=8002000),
                  host("unknown")], ["HypervisorVersionWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["new", "old", "unknown"]


def test_build_failure_weigher_negates_the_multiplier():
    out = weigh([host("h1", failed_builds=1), host("h2")], ["BuildFailureWeigher", "RAMWeigher"])
    assert column(out, "BuildFailureWeigher", "multiplier") == {"h1": -1e6, "h2": -1e6}
    assert weights(out)["h1"] == pytest.approx(-1e6 + 1)


def test_build_failure_aggregate_override_is_negated_too():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"build_failure_weight_multiplier": "2"}}]
    out = weigh([host("h1", failed_builds=3), host("h2")], ["BuildFailureWeigher"],
                 aggregates=aggs)
    assert column(out, "BuildFailureWeigher", "multiplier")["h1"] == -2.0
