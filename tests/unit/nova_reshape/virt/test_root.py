"""The root's CPU, memory and disk records as nova.conf sets them (virt/root.py)."""

from __future__ import annotations

from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.virt.root import configured, ratio, reserved

INVENTORY = {
    "VCPU": {"total": 32, "reserved": 0, "allocation_ratio": 16.0},
    "MEMORY_MB": {"total": 131072, "reserved": 512, "allocation_ratio": 1.5},
    "DISK_GB": {"total": 1000, "reserved": 0, "allocation_ratio": 1.0},
    "VGPU": {"total": 4, "reserved": 0, "allocation_ratio": 1.0},
}


def test_without_nova_conf_nothing_changes():
    result = configured(INVENTORY, None)
    assert result == INVENTORY and result["VCPU"] is not INVENTORY["VCPU"]


def test_a_set_ratio_wins_an_unset_one_keeps_the_current_record():
    conf = NovaConf(cpu_allocation_ratio=2.0, reserved_host_cpus=2,
                    reserved_host_memory_mb=4096, reserved_host_disk_mb=1025)
    result = configured(INVENTORY, conf)
    assert result["VCPU"] == {"total": 32, "reserved": 2, "allocation_ratio": 2.0}
    assert result["MEMORY_MB"] == {"total": 131072, "reserved": 4096, "allocation_ratio": 1.5}
    assert result["DISK_GB"]["reserved"] == 2  # 1025 MB rounded up to whole GB
    assert result["VGPU"] == INVENTORY["VGPU"]  # not the root's CPU, memory or disk


def test_a_new_record_gets_the_initial_ratio():
    conf = NovaConf(initial_cpu_allocation_ratio=4.0, ram_allocation_ratio=0.0)
    assert ratio(conf, "VCPU", None) == 4.0
    assert ratio(conf, "MEMORY_MB", {"allocation_ratio": 1.5}) == 1.5  # 0.0 means unset
    assert ratio(conf, "DISK_GB", {}) == 1.0
    assert reserved(NovaConf(), "MEMORY_MB") == 512
