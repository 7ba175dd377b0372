"""Weighers: raw values, nova's normalization, multipliers and overrides."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ConfigError, PluginNotFound
from nova_reshape.scheduler.result import result_to_dict
from nova_reshape.scheduler.weights import all_weighers, load_weighers, normalize
from tests.unit.nova_reshape.scheduler.helpers import host, schedule

VCPUS_FREE = [5, 5, 10, 10, 15, 20, 20, 15, 10, 5]


def _weigh(hosts, weighers, request=None, aggregates=None, **options):
    config = {"filter_scheduler": dict({"enabled_filters": ["AllHostsFilter"],
                                        "weight_classes": weighers}, **options)}
    metrics = options.pop("metrics", None)
    if metrics is not None:
        config["filter_scheduler"].pop("metrics")
        config["metrics"] = metrics
    return result_to_dict(schedule(hosts, request, config, aggregates))


def _column(out, weigher, key="normalized"):
    return {w["host"]: w["weighers"][weigher][key] for w in out["instances"][0]["weighed"]}


def _weights(out):
    return {w["host"]: w["weight"] for w in out["instances"][0]["weighed"]}


def _cpu_hosts():
    return [host(f"h{i}", vcpus=20, vcpus_used=20 - free) for i, free in enumerate(VCPUS_FREE)]


def test_normalize():
    assert normalize([]) == []
    assert normalize([1, 2, 3]) == [0.0, 0.5, 1.0]
    assert normalize([4, 4]) == [0.0, 0.0]
    assert normalize([5, 10], minval=0) == [0.5, 1.0]
    assert normalize([5, 10], maxval=20) == [0.0, 1 / 3]


def test_cpu_weigher_divides_by_the_maximum():
    out = _weigh(_cpu_hosts(), ["CPUWeigher"])
    norm = _column(out, "CPUWeigher")
    assert [norm[f"h{i}"] for i in range(10)] == pytest.approx(
        [0.25, 0.25, 0.5, 0.5, 0.75, 1, 1, 0.75, 0.5, 0.25])


def test_minmax_option_reproduces_the_weights_doc_table():
    out = _weigh(_cpu_hosts(), ["CPUWeigher"], weight_normalization="minmax")
    norm = _column(out, "CPUWeigher")
    assert [round(norm[f"h{i}"], 2) for i in range(10)] == \
        [0, 0, 0.33, 0.33, 0.67, 1, 1, 0.67, 0.33, 0]


def test_invalid_normalization_option_is_rejected():
    with pytest.raises(ConfigError):
        SchedulerConfig({"filter_scheduler": {"weight_normalization": "zscore"}})


@pytest.mark.parametrize("weigher", ["RAMWeigher", "DiskWeigher"])
def test_equal_positive_values_normalize_to_one_for_minval_zero_weighers(weigher):
    out = _weigh([host("h1"), host("h2")], [weigher])
    assert set(_column(out, weigher).values()) == {1.0}


def test_all_zero_values_normalize_to_zero():
    out = _weigh([host("h1"), host("h2")], ["IoOpsWeigher"])
    assert set(_column(out, "IoOpsWeigher").values()) == {0.0}


def test_negative_free_ram_is_clamped_to_zero():
    out = _weigh([host("h1", free_ram_mb=-512), host("h2", free_ram_mb=1024)], ["RAMWeigher"])
    assert _column(out, "RAMWeigher", "raw") == {"h1": 0, "h2": 1024}
    assert _column(out, "RAMWeigher") == {"h1": 0.0, "h2": 1.0}


def test_io_ops_weigher_prefers_idle_hosts():
    out = _weigh([host("busy", num_io_ops=4), host("idle")], ["IoOpsWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["idle", "busy"]
    assert _weights(out)["busy"] == -1.0


def test_disk_weigher_uses_disk_available_least():
    out = _weigh([host("h1", local_gb=100, disk_available_least=10), host("h2", local_gb=20)],
                 ["DiskWeigher"])
    assert _column(out, "DiskWeigher", "raw") == {"h1": 10240, "h2": 20480}


def test_num_instances_weigher_default_multiplier_is_zero():
    out = _weigh([host("h1", num_instances=1), host("h2", num_instances=9)],
                 ["NumInstancesWeigher"])
    assert _weights(out) == {"h1": 0.0, "h2": 0.0}
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["h1", "h2"]


def test_hypervisor_version_weigher():
    out = _weigh([host("old", hypervisor_version=6000000), host("new", hypervisor_version=8002000),
                  host("unknown")], ["HypervisorVersionWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["new", "old", "unknown"]


def test_build_failure_weigher_negates_the_multiplier():
    out = _weigh([host("h1", failed_builds=1), host("h2")], ["BuildFailureWeigher", "RAMWeigher"])
    assert _column(out, "BuildFailureWeigher", "multiplier") == {"h1": -1e6, "h2": -1e6}
    assert _weights(out)["h1"] == pytest.approx(-1e6 + 1)


def test_build_failure_aggregate_override_is_negated_too():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"build_failure_weight_multiplier": "2"}}]
    out = _weigh([host("h1", failed_builds=3), host("h2")], ["BuildFailureWeigher"],
                 aggregates=aggs)
    assert _column(out, "BuildFailureWeigher", "multiplier")["h1"] == -2.0


def test_cross_cell_weigher_needs_allow_cross_cell_move():
    hosts = [host("h1", cell="cell2"), host("h2", cell="cell1")]
    request = {"requested_destination": {"cell": "cell1"}}
    assert set(_column(_weigh(hosts, ["CrossCellWeigher"], request), "CrossCellWeigher",
                       "raw").values()) == {0}
    request["requested_destination"]["allow_cross_cell_move"] = True
    out = _weigh(hosts, ["CrossCellWeigher"], request)
    assert _column(out, "CrossCellWeigher", "raw") == {"h1": -1, "h2": 1}


def test_pci_weigher_prefers_hosts_without_devices():
    pool = {"vendor_id": "8086", "product_id": "1", "count": 150}
    out = _weigh([host("pci", pci_device_pools=[pool]), host("few", pci_device_pools=[
        dict(pool, count=3)]), host("none")], ["PCIWeigher"])
    assert _column(out, "PCIWeigher", "raw") == {"none": 100, "few": 97, "pci": 1}


def test_pci_weight_multiplier_must_not_be_negative():
    with pytest.raises(ConfigError, match="pci_weight_multiplier"):
        SchedulerConfig({"filter_scheduler": {"pci_weight_multiplier": -1}})


GROUP_HOSTS = [host("h1", instances=["m1", "m2"]), host("h2", instances=["m3"]), host("h3")]


@pytest.mark.parametrize(("weigher", "policy", "raw"), [
    ("ServerGroupSoftAffinityWeigher", "soft-affinity", {"h1": 2, "h2": 1, "h3": 0}),
    ("ServerGroupSoftAntiAffinityWeigher", "soft-anti-affinity", {"h1": -2, "h2": -1, "h3": 0}),
    ("ServerGroupSoftAffinityWeigher", "affinity", {"h1": 0, "h2": 0, "h3": 0}),
    ("ServerGroupSoftAntiAffinityWeigher", "soft-affinity", {"h1": 0, "h2": 0, "h3": 0}),
])
def test_soft_affinity_weighers(weigher, policy, raw):
    request = {"instance_group": {"policy": policy, "members": ["m1", "m2", "m3", "new"],
                                  "rules": {"max_server_per_host": 1}}}
    out = _weigh(GROUP_HOSTS, [weigher], request)
    assert _column(out, weigher, "raw") == raw


def test_metrics_weigher_sums_ratio_times_stored_int():
    hosts = [host("h1", metrics={"cpu.percent": 0.29, "cpu.frequency": 1000}),
             host("h2", metrics={"cpu.percent": 0.58, "cpu.frequency": 2000})]
    out = _weigh(hosts, ["MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=-1.0", "cpu.frequency=0.5"]})
    assert _column(out, "MetricsWeigher", "raw") == {"h1": 500 - 28, "h2": 1000 - 57}


def test_metrics_weigher_required_metric_missing_is_a_weigh_error():
    hosts = [host("h1", metrics={"cpu.percent": 0.2}), host("h2")]
    out = _weigh(hosts, ["RAMWeigher", "MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert out["error"]["stage"] == "weigh"
    assert out["error"]["weigher"] == "MetricsWeigher"
    assert out["error"]["type"] == "ComputeHostMetricNotFound"
    assert "cpu.percent" in out["error"]["message"]


def test_metrics_weigher_does_not_run_for_a_single_host():
    out = _weigh([host("h2")], ["MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert out["error"] is None and out["selected"] == ["h2"]


def test_metrics_weigher_unavailable_metric_with_zero_ratio_is_ignored():
    hosts = [host("h1", metrics={"cpu.percent": 0.5}), host("h2")]
    out = _weigh(hosts, ["MetricsWeigher"], metrics={
        "weight_setting": ["cpu.percent=0"], "required": False})
    assert _column(out, "MetricsWeigher", "raw") == {"h1": 0.0, "h2": 0.0}


def test_metrics_weigher_aggregate_multiplier():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"metrics_weight_multiplier": "3"}}]
    hosts = [host("h1", metrics={"cpu.percent": 0.5}), host("h2", metrics={"cpu.percent": 0.1})]
    out = _weigh(hosts, ["MetricsWeigher"], aggregates=aggs,
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert _column(out, "MetricsWeigher", "multiplier") == {"h1": 3.0, "h2": 1.0}


IMG = {"image": {"properties": {"os_distro": "ubuntu", "hw_machine_type": "q35"}}}


def _image_hosts():
    same = {"uuid": "i1", "image_properties": {"os_distro": "ubuntu", "hw_machine_type": "q35"}}
    other = {"uuid": "i2", "image_properties": {"os_distro": "centos"}}
    return [host("h1", instances=[same]), host("h2", instances=[other]), host("h3")]


def test_image_props_weigher_is_off_with_the_default_multiplier():
    out = _weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG)
    assert set(_column(out, "ImagePropertiesWeigher", "raw").values()) == {0.0}


def test_image_props_weigher_counts_shared_properties():
    out = _weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG,
                 image_props_weight_multiplier=1.0)
    assert _column(out, "ImagePropertiesWeigher", "raw") == {"h1": 2.0, "h2": 0.0, "h3": 0.0}


def test_image_props_weigher_setting_weights_properties():
    out = _weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG,
                 image_props_weight_multiplier=1.0,
                 image_props_weight_setting=["os_distro=3"])
    assert _column(out, "ImagePropertiesWeigher", "raw")["h1"] == 3.0


def test_image_props_weigher_global_zero_ignores_aggregate_override():
    aggs = [{"name": "a", "hosts": ["h1", "h2", "h3"],
             "metadata": {"image_props_weight_multiplier": "5"}}]
    out = _weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG, aggregates=aggs)
    assert set(_column(out, "ImagePropertiesWeigher", "raw").values()) == {0.0}


def test_aggregate_multipliers_minimum_wins_and_one_bad_value_drops_all():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "2.0"}},
            {"name": "b", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "-1.0"}},
            {"name": "c", "hosts": ["h2"], "metadata": {"ram_weight_multiplier": "3.0"}},
            {"name": "d", "hosts": ["h2"], "metadata": {"ram_weight_multiplier": "abc"}},
            {"name": "e", "hosts": ["h3"], "metadata": {"ram_weight_multiplier": "1.5, 2"}}]
    out = _weigh([host("h1"), host("h2"), host("h3")], ["RAMWeigher"], aggregates=aggs,
                 ram_weight_multiplier=0.5)
    # "1.5, 2" is not split: float() fails, so h3 keeps the config value too
    assert _column(out, "RAMWeigher", "multiplier") == {"h1": -1.0, "h2": 0.5, "h3": 0.5}


def test_weights_sum_over_weighers_with_per_host_multipliers():
    hosts = [host("h1", memory_mb=1000, vcpus=10), host("h2", memory_mb=500, vcpus=20)]
    out = _weigh(hosts, ["RAMWeigher", "CPUWeigher"], cpu_weight_multiplier=2.0)
    assert _weights(out) == {"h1": pytest.approx(1.0 + 2 * 0.5), "h2": pytest.approx(0.5 + 2.0)}
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["h2", "h1"]


def test_equal_weights_keep_input_order():
    out = _weigh([host("c"), host("a"), host("b")], ["RAMWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["c", "a", "b"]


def test_single_host_is_not_weighed():
    out = _weigh([host("h1")], ["RAMWeigher"])
    assert out["instances"][0]["weighed"] == [{"host": "h1", "weight": 0.0, "weighers": {}}]


def test_weight_classes_resolution():
    conf = SchedulerConfig({"filter_scheduler": {"weight_classes": [
        "RAMWeigher", "nova.scheduler.weights.cpu.CPUWeigher"]}})
    assert [w.name for w in load_weighers(conf)] == ["RAMWeigher", "CPUWeigher"]
    assert [w.name for w in load_weighers(SchedulerConfig())] == \
        [cls.__name__ for cls in all_weighers()]
    assert len(all_weighers()) == 13


def test_unknown_weigher_is_rejected():
    with pytest.raises(PluginNotFound):
        load_weighers(SchedulerConfig({"filter_scheduler": {"weight_classes": ["Nope"]}}))
