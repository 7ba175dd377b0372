"""The other weighers: cross-cell, PCI, server-group soft affinity, metrics, image properties."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ConfigError
from tests.unit.nova_reshape.scheduler.helpers import host
from tests.unit.nova_reshape.scheduler.weights.helpers import column, weigh


def test_cross_cell_weigher_needs_allow_cross_cell_move():
    hosts = [host("h1", cell="cell2"), host("h2", cell="cell1")]
    request = {"requested_destination": {"cell": "cell1"}}
    assert set(column(weigh(hosts, ["CrossCellWeigher"], request), "CrossCellWeigher",
                       "raw").values()) == {0}
    request["requested_destination"]["allow_cross_cell_move"] = True
    out = weigh(hosts, ["CrossCellWeigher"], request)
    assert column(out, "CrossCellWeigher", "raw") == {"h1": -1, "h2": 1}


def test_pci_weigher_prefers_hosts_without_devices():
    pool = {"vendor_id": "8086", "product_id": "1", "count": 150}
    out = weigh([host("pci", pci_device_pools=[pool]), host("few", pci_device_pools=[
        dict(pool, count=3)]), host("none")], ["PCIWeigher"])
    assert column(out, "PCIWeigher", "raw") == {"none": 100, "few": 97, "pci": 1}


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
    out = weigh(GROUP_HOSTS, [weigher], request)
    assert column(out, weigher, "raw") == raw


def test_metrics_weigher_sums_ratio_times_stored_int():
    hosts = [host("h1", metrics={"cpu.percent": 0.29, "cpu.frequency": 1000}),
             host("h2", metrics={"cpu.percent": 0.58, "cpu.frequency": 2000})]
    out = weigh(hosts, ["MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=-1.0", "cpu.frequency=0.5"]})
    assert column(out, "MetricsWeigher", "raw") == {"h1": 500 - 28, "h2": 1000 - 57}


def test_metrics_weigher_required_metric_missing_is_a_weigh_error():
    hosts = [host("h1", metrics={"cpu.percent": 0.2}), host("h2")]
    out = weigh(hosts, ["RAMWeigher", "MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert out["error"]["stage"] == "weigh"
    assert out["error"]["weigher"] == "MetricsWeigher"
    assert out["error"]["type"] == "ComputeHostMetricNotFound"
    assert "cpu.percent" in out["error"]["message"]


def test_metrics_weigher_does_not_run_for_a_single_host():
    out = weigh([host("h2")], ["MetricsWeigher"],
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert out["error"] is None and out["selected"] == ["h2"]


def test_metrics_weigher_unavailable_metric_with_zero_ratio_is_ignored():
    hosts = [host("h1", metrics={"cpu.percent": 0.5}), host("h2")]
    out = weigh(hosts, ["MetricsWeigher"], metrics={
        "weight_setting": ["cpu.percent=0"], "required": False})
    assert column(out, "MetricsWeigher", "raw") == {"h1": 0.0, "h2": 0.0}


def test_metrics_weigher_aggregate_multiplier():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"metrics_weight_multiplier": "3"}}]
    hosts = [host("h1", metrics={"cpu.percent": 0.5}), host("h2", metrics={"cpu.percent": 0.1})]
    out = weigh(hosts, ["MetricsWeigher"], aggregates=aggs,
                 metrics={"weight_setting": ["cpu.percent=1.0"]})
    assert column(out, "MetricsWeigher", "multiplier") == {"h1": 3.0, "h2": 1.0}


IMG = {"image": {"properties": {"os_distro": "ubuntu", "hw_machine_type": "q35"}}}


def _image_hosts():
    same = {"uuid": "i1", "image_properties": {"os_distro": "ubuntu", "hw_machine_type": "q35"}}
    other = {"uuid": "i2", "image_properties": {"os_distro": "centos"}}
    return [host("h1", instances=[same]), host("h2", instances=[other]), host("h3")]


def test_image_props_weigher_is_off_with_the_default_multiplier():
    out = weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG)
    assert set(column(out, "ImagePropertiesWeigher", "raw").values()) == {0.0}


def test_image_props_weigher_counts_shared_properties():
    out = weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG,
                 image_props_weight_multiplier=1.0)
    assert column(out, "ImagePropertiesWeigher", "raw") == {"h1": 2.0, "h2": 0.0, "h3": 0.0}


def test_image_props_weigher_setting_weights_properties():
    out = weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG,
                 image_props_weight_multiplier=1.0,
                 image_props_weight_setting=["os_distro=3"])
    assert column(out, "ImagePropertiesWeigher", "raw")["h1"] == 3.0


def test_image_props_weigher_global_zero_ignores_aggregate_override():
    aggs = [{"name": "a", "hosts": ["h1", "h2", "h3"],
             "metadata": {"image_props_weight_multiplier": "5"}}]
    out = weigh(_image_hosts(), ["ImagePropertiesWeigher"], IMG, aggregates=aggs)
    assert set(column(out, "ImagePropertiesWeigher", "raw").values()) == {0.0}
