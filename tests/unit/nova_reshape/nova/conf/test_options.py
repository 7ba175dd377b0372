"""The option tables: nova's groups, names, types and defaults, registered once each."""

from __future__ import annotations

import pytest
from oslo_config import cfg

from nova_reshape.nova.conf import options
from nova_reshape.nova.hypervisor import ARCHITECTURES


def registered(tmp_path, text: str = "") -> cfg.ConfigOpts:
    path = tmp_path / "nova.conf"
    path.write_text(text)
    conf = options.register_opts(cfg.ConfigOpts())
    conf([], project="nova", default_config_files=[str(path)], default_config_dirs=[],
         use_env=False)
    return conf


def test_each_table_call_builds_new_options():
    first, second = options.compute_opts(), options.compute_opts()
    assert first["pci"][0] is not second["pci"][0]
    assert first["pci"][0] == second["pci"][0]


def test_the_tables_share_groups_without_clashing_names():
    names: dict[str | None, list[str]] = {}
    for table in (options.compute_opts(), options.scheduler_opts(), options.database_opts()):
        for group, opts in table.items():
            names.setdefault(group, []).extend(opt.name for opt in opts)
    assert all(len(set(listed)) == len(listed) for listed in names.values())
    assert set(names["pci"]) == {"report_in_placement", "device_spec", "alias"}


def test_nova_defaults(tmp_path):
    conf = registered(tmp_path)
    assert conf.filter_scheduler.enabled_filters == options.DEFAULT_ENABLED_FILTERS
    assert conf.filter_scheduler.io_ops_weight_multiplier == -1.0
    assert conf.initial_cpu_allocation_ratio == 4.0 and conf.cpu_allocation_ratio is None
    assert conf.reserved_host_memory_mb == 512
    assert conf.database.connection is None


def test_the_deprecated_names_nova_still_reads(tmp_path):
    conf = registered(tmp_path, "[pci]\npassthrough_whitelist = {\"vendor_id\": \"10de\"}\n"
                                "[devices]\nenabled_vgpu_types = nvidia-35\n")
    assert conf.pci.device_spec == ['{"vendor_id": "10de"}']
    assert conf.devices.enabled_mdev_types == ["nvidia-35"]


def test_choices_accept_nova_names(tmp_path):
    group = registered(tmp_path, "[filter_scheduler]\n"
                                 "image_properties_default_architecture = m68k\n"
                                 "weight_normalization = minmax\n").filter_scheduler
    assert group.image_properties_default_architecture == "m68k"
    assert group.weight_normalization == "minmax"


def test_choices_refuse_other_values(tmp_path):
    conf = registered(tmp_path, "[filter_scheduler]\nimage_properties_default_architecture = "
                                "pdp11\n")
    assert "pdp11" not in ARCHITECTURES
    with pytest.raises(ValueError):
        conf.filter_scheduler.image_properties_default_architecture  # noqa: B018
