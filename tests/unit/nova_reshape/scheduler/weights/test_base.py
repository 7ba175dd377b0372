"""The weigher bases: nova's ``_weigh_object`` for third parties, batch forms for built-ins.

The third-party weighers below are written only against nova's contract
(``_weigh_object``, optionally ``weight_multiplier``) and are loaded by
dotted path through ``weight_classes``, as an operator would.
"""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ConfigError, PluginNotFound
from nova_reshape.scheduler.result import result_to_dict
from nova_reshape.scheduler.weights import (
    BaseHostWeigher,
    BatchHostWeigher,
    HostAttributeWeigher,
    all_weighers,
    load_weighers,
    normalize,
)
from tests.unit.nova_reshape.scheduler.helpers import conf, host, scenario, schedule
from tests.unit.nova_reshape.scheduler.weights.helpers import column, cpu_hosts, weigh, weights

HERE = __name__


class VcpuWeigher(BaseHostWeigher):
    """Total vCPUs, never below 10 (nova's minval clamp)."""

    minval = 10

    def _weigh_object(self, host_state, weight_properties):
        return host_state.vcpus_total


class RackWeigher(BaseHostWeigher):
    """1 for every host; rack r1 hosts get multiplier 5 (nova's weight_multiplier)."""

    def _weigh_object(self, host_state, weight_properties):
        return 1 if host_state.host == "h3" else 0

    def weight_multiplier(self, host_state):
        return 5.0 if host_state.stats.get("rack") == "r1" else 2.0


def _hosts():
    return [host("h1", vcpus=8), host("h2", vcpus=16, stats={"rack": "r1"}),
            host("h3", vcpus=32, stats={"rack": "r1"})]


def _weighed(weighers, **options):
    config = {"filter_scheduler": dict({"enabled_filters": ["AllHostsFilter"],
                                        "weight_classes": weighers}, **options)}
    out = result_to_dict(schedule(_hosts(), {}, config))
    return {w["host"]: w["weighers"] for w in out["instances"][0]["weighed"]}


def test_third_party_weigh_object_is_loaded_clamped_and_normalized():
    weighed = _weighed([f"{HERE}.VcpuWeigher"])
    assert {name: w["VcpuWeigher"]["raw"] for name, w in weighed.items()} == \
        {"h1": 10, "h2": 16, "h3": 32}
    assert {name: w["VcpuWeigher"]["normalized"] for name, w in weighed.items()} == \
        {"h1": 0.0, "h2": 6 / 22, "h3": 1.0}
    assert {w["VcpuWeigher"]["multiplier"] for w in weighed.values()} == {1.0}


def test_third_party_weigher_under_minmax_uses_unclamped_values():
    weighed = _weighed([f"{HERE}.VcpuWeigher"], weight_normalization="minmax")
    assert {name: w["VcpuWeigher"]["raw"] for name, w in weighed.items()} == \
        {"h1": 8, "h2": 16, "h3": 32}
    assert weighed["h2"]["VcpuWeigher"]["normalized"] == 8 / 24


def test_third_party_weight_multiplier_is_asked_per_host():
    weighed = _weighed([f"{HERE}.RackWeigher"])
    assert {name: w["RackWeigher"]["multiplier"] for name, w in weighed.items()} == \
        {"h1": 2.0, "h2": 5.0, "h3": 5.0}
    assert list(weighed) == ["h3", "h1", "h2"]


def test_base_weigher_without_weigh_object_is_an_error():
    weigher = BaseHostWeigher()
    loaded = scenario(_hosts())
    with pytest.raises(NotImplementedError, match="_weigh_object"):
        weigher.weigh_objects(loaded.hosts, loaded.spec)
    with pytest.raises(NotImplementedError, match="raw_weights"):
        BatchHostWeigher().weigh_objects(loaded.hosts, loaded.spec)


@pytest.mark.parametrize("cls", all_weighers(), ids=lambda cls: cls.__name__)
def test_builtin_weigh_object_is_its_batch_of_one(cls):
    loaded = scenario(_hosts())
    (weigher,) = load_weighers(conf(filter_scheduler={"weight_classes": [cls.__name__]}))
    assert [weigher._weigh_object(h, loaded.spec) for h in loaded.hosts] == \
        weigher.raw_weights(loaded.hosts, loaded.spec)


@pytest.mark.parametrize("cls", all_weighers(), ids=lambda cls: cls.__name__)
def test_builtin_batch_multipliers_equal_the_per_host_ones(cls):
    assert issubclass(cls, BatchHostWeigher)
    aggregates = [{"name": "a", "hosts": ["h2"], "metadata": {
        cls.multiplier_option or "unused": "7", "other": "1"}},
        {"name": "b", "hosts": ["h3"], "metadata": {"other": "2"}}]
    loaded = scenario(_hosts(), {}, {"filter_scheduler": {"weight_classes": [cls.__name__]}},
                      aggregates)
    (weigher,) = load_weighers(loaded.conf)
    per_host = [weigher.weight_multiplier(h) for h in loaded.hosts]
    assert weigher.weight_multipliers(loaded.hosts, [1, 2]) == per_host
    assert weigher.weight_multipliers(loaded.hosts) == per_host
    if cls.multiplier_option:
        assert per_host[1] == cls.multiplier_sign * 7.0


def test_attribute_weigher_reads_the_named_attribute():
    class FreeRam(HostAttributeWeigher):
        attribute = "free_ram_mb"

    loaded = scenario(_hosts())
    assert FreeRam().raw_weights(loaded.hosts, loaded.spec) == [16384, 16384, 16384]


# -- nova's normalization, multipliers and loading, shared by every weigher ---------------

def test_normalize():
    assert normalize([]) == []
    assert normalize([1, 2, 3]) == [0.0, 0.5, 1.0]
    assert normalize([4, 4]) == [0.0, 0.0]
    assert normalize([5, 10], minval=0) == [0.5, 1.0]
    assert normalize([5, 10], maxval=20) == [0.0, 1 / 3]


def test_minmax_option_reproduces_the_weights_doc_table():
    out = weigh(cpu_hosts(), ["CPUWeigher"], weight_normalization="minmax")
    norm = column(out, "CPUWeigher")
    assert [round(norm[f"h{i}"], 2) for i in range(10)] == \
        [0, 0, 0.33, 0.33, 0.67, 1, 1, 0.67, 0.33, 0]


def test_invalid_normalization_option_is_rejected():
    with pytest.raises(ConfigError):
        SchedulerConfig({"filter_scheduler": {"weight_normalization": "zscore"}})


def test_aggregate_multipliers_minimum_wins_and_one_bad_value_drops_all():
    aggs = [{"name": "a", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "2.0"}},
            {"name": "b", "hosts": ["h1"], "metadata": {"ram_weight_multiplier": "-1.0"}},
            {"name": "c", "hosts": ["h2"], "metadata": {"ram_weight_multiplier": "3.0"}},
            {"name": "d", "hosts": ["h2"], "metadata": {"ram_weight_multiplier": "abc"}},
            {"name": "e", "hosts": ["h3"], "metadata": {"ram_weight_multiplier": "1.5, 2"}}]
    out = weigh([host("h1"), host("h2"), host("h3")], ["RAMWeigher"], aggregates=aggs,
                 ram_weight_multiplier=0.5)
    # "1.5, 2" is not split: float() fails, so h3 keeps the config value too
    assert column(out, "RAMWeigher", "multiplier") == {"h1": -1.0, "h2": 0.5, "h3": 0.5}


def test_weights_sum_over_weighers_with_per_host_multipliers():
    hosts = [host("h1", memory_mb=1000, vcpus=10), host("h2", memory_mb=500, vcpus=20)]
    out = weigh(hosts, ["RAMWeigher", "CPUWeigher"], cpu_weight_multiplier=2.0)
    assert weights(out) == {"h1": pytest.approx(1.0 + 2 * 0.5), "h2": pytest.approx(0.5 + 2.0)}
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["h2", "h1"]


def test_equal_weights_keep_input_order():
    out = weigh([host("c"), host("a"), host("b")], ["RAMWeigher"])
    assert [w["host"] for w in out["instances"][0]["weighed"]] == ["c", "a", "b"]


def test_single_host_is_not_weighed():
    out = weigh([host("h1")], ["RAMWeigher"])
    assert out["instances"][0]["weighed"] == [{"host": "h1", "weight": 0.0, "weighers": {}}]


def test_weight_classes_resolution():
    config = SchedulerConfig({"filter_scheduler": {"weight_classes": [
        "RAMWeigher", "nova.scheduler.weights.cpu.CPUWeigher"]}})
    assert [w.name for w in load_weighers(config)] == ["RAMWeigher", "CPUWeigher"]
    assert [w.name for w in load_weighers(SchedulerConfig())] == \
        [cls.__name__ for cls in all_weighers()]
    assert len(all_weighers()) == 13


def test_unknown_weigher_is_rejected():
    with pytest.raises(PluginNotFound):
        load_weighers(SchedulerConfig({"filter_scheduler": {"weight_classes": ["Nope"]}}))
