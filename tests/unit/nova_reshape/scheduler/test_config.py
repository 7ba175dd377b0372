"""SchedulerConfig: defaults, oslo types, strict sections, parsed settings."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.files import load_conf
from nova_reshape.nova.conf.options import DEFAULT_ENABLED_FILTERS
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ConfigError


def test_defaults_are_novas():
    conf = SchedulerConfig()
    fs = conf.filter_scheduler
    assert fs.enabled_filters == DEFAULT_ENABLED_FILTERS
    assert (fs.host_subset_size, fs.max_instances_per_host, fs.max_io_ops_per_host) == (1, 50, 8)
    assert (fs.ram_weight_multiplier, fs.cpu_weight_multiplier, fs.disk_weight_multiplier,
            fs.io_ops_weight_multiplier, fs.pci_weight_multiplier) == (1.0, 1.0, 1.0, -1.0, 1.0)
    assert (fs.build_failure_weight_multiplier, fs.cross_cell_move_weight_multiplier) == \
        (1e6, 1e6)
    assert (fs.num_instances_weight_multiplier, fs.image_props_weight_multiplier) == (0.0, 0.0)
    assert fs.restrict_isolated_hosts_to_isolated_images is True
    assert fs.aggregate_image_properties_isolation_separator == "."
    assert (conf.metrics.required, conf.metrics.weight_of_unavailable,
            conf.metrics.weight_multiplier) == (True, -10000.0, 1.0)
    assert (conf.DEFAULT.default_availability_zone, conf.DEFAULT.service_down_time) == \
        ("nova", 60)


def test_values_are_converted_like_oslo_does():
    conf = SchedulerConfig({"filter_scheduler": {"host_subset_size": "3",
                                                 "isolated_hosts": "h1, h2",
                                                 "restrict_isolated_hosts_to_isolated_images":
                                                     "no"},
                            "metrics": {"required": "false"}})
    assert conf.filter_scheduler.host_subset_size == 3
    assert conf.filter_scheduler.isolated_hosts == ["h1", "h2"]
    assert conf.filter_scheduler.restrict_isolated_hosts_to_isolated_images is False
    assert conf.metrics.required is False


@pytest.mark.parametrize(("section", "option", "value"), [
    ("filter_scheduler", "host_subset_size", 0),
    ("filter_scheduler", "max_instances_per_host", 0),
    ("filter_scheduler", "max_io_ops_per_host", -1),
    ("filter_scheduler", "soft_affinity_weight_multiplier", -0.5),
    ("filter_scheduler", "soft_anti_affinity_weight_multiplier", -2),
    ("filter_scheduler", "ram_weight_multiplier", "heavy"),
    ("filter_scheduler", "image_properties_default_architecture", "z80"),
    ("metrics", "weight_of_unavailable", "low"),
    ("DEFAULT", "service_down_time", "soon"),
])
def test_invalid_values_are_rejected(section, option, value):
    with pytest.raises(ConfigError, match=option):
        SchedulerConfig({section: {option: value}})


def test_unknown_options_in_strict_sections_are_rejected():
    with pytest.raises(ConfigError, match="weight_setings"):
        SchedulerConfig({"metrics": {"weight_setings": []}})


def test_other_sections_accept_any_nova_option():
    conf = SchedulerConfig({"scheduler": {"max_attempts": 5}, "DEFAULT": {"debug": True}})
    assert conf.DEFAULT.service_down_time == 60


def test_weight_settings_are_parsed_dropping_bad_entries():
    conf = SchedulerConfig({"metrics": {"weight_setting": [
        "cpu.percent=-1.0", "bad", "cpu.frequency=x", " cpu.idle.time = 2 "]},
        "filter_scheduler": {"image_props_weight_setting": ["os_distro=2", "a=b=c"]}})
    assert conf.metrics_weight_setting == [("cpu.percent", -1.0), ("cpu.idle.time", 2.0)]
    assert conf.image_props_weight_setting == {"os_distro": 2.0}


def test_pci_aliases_from_strings_and_objects():
    conf = SchedulerConfig({"pci": {"alias": [
        '{"name": "a", "vendor_id": "8086", "device_type": "type-PF"}',
        {"name": "a", "vendor_id": "15b3"}, {"name": "b", "numa_policy": "required"}]}})
    assert conf.pci_aliases["a"]["specs"] == [{"vendor_id": "8086", "dev_type": "type-PF"},
                                              {"vendor_id": "15b3"}]
    assert conf.pci_aliases["b"]["numa_policy"] == "required"


@pytest.mark.parametrize("alias", ["{bad", {"vendor_id": "8086"}, {"name": "x",
                                                                   "numa_policy": "odd"}])
def test_invalid_pci_alias(alias):
    with pytest.raises(ConfigError):
        SchedulerConfig({"pci": {"alias": [alias]}})


def test_config_must_be_sections_of_options():
    with pytest.raises(ConfigError):
        SchedulerConfig({"filter_scheduler": ["x"]})


def test_from_a_parsed_nova_conf(tmp_path):
    path = tmp_path / "nova.conf"
    path.write_text("[filter_scheduler]\nhost_subset_size = 2\nenabled_filters = ComputeFilter\n"
                    "[metrics]\nweight_setting = cpu.frequency=2.0\n"
                    "[pci]\nalias = {\"name\": \"gpu\", \"vendor_id\": \"10de\"}\n"
                    "[DEFAULT]\nservice_down_time = 90\n")
    conf = SchedulerConfig.from_opts(load_conf([str(path)]))
    assert conf.filter_scheduler.host_subset_size == 2
    assert conf.filter_scheduler.enabled_filters == ["ComputeFilter"]
    assert conf.metrics_weight_setting == [("cpu.frequency", 2.0)]
    assert list(conf.pci_aliases) == ["gpu"]
    assert conf.DEFAULT.service_down_time == 90
    assert conf.scheduler.max_attempts == 3
