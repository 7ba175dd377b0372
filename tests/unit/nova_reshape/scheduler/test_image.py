"""Image property coercion and the hypervisor-version predicates."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler import image
from nova_reshape.scheduler.errors import ScenarioError


def test_image_properties_are_coerced_and_unknown_ones_dropped():
    props = image.image_properties({
        "architecture": "amd64", "hw_vm_mode": "hv", "img_hv_type": "XAPI",
        "hw_numa_nodes": "2", "hw_qemu_guest_agent": "yes", "my_custom": "x",
        "hw_numa_cpus.0": "0-1", "hw_numa_mem.0": "512", "os_distro": "ubuntu"})
    assert props == {"hw_architecture": "x86_64", "hw_vm_mode": "hvm", "img_hv_type": "xen",
                     "hw_numa_nodes": 2, "hw_qemu_guest_agent": True, "os_distro": "ubuntu",
                     "hw_numa_cpus": ["0-1"], "hw_numa_mem": [512]}


def test_current_property_names_win_over_legacy_ones():
    assert image.image_properties({"architecture": "i386", "hw_architecture": "aarch64"}) == \
        {"hw_architecture": "aarch64"}


@pytest.mark.parametrize("raw", [{"hw_numa_nodes": "two"}, {"img_hv_type": "hal9000"},
                                 {"traits_required": "X"}])
def test_invalid_image_properties(raw):
    with pytest.raises(ScenarioError):
        image.image_properties(raw)


@pytest.mark.parametrize(("predicate", "version", "expected"), [
    (">= 7.0, < 9.0", "8.2.0", True), (">= 7.0, < 9.0", "9.0.0", False),
    ("== 8.2", "8.2.0", True), ("!= 8.2", "8.2.0", False), ("> 8", "8.0.1", True),
    ("<= 1.0", "1.0.0", True),
])
def test_version_predicates(predicate, version, expected):
    assert image.version_satisfies(predicate, version) is expected


def test_version_to_str():
    assert image.version_to_str(8002000) == "8.2.0"
    assert image.version_to_str(7000001) == "7.0.1"
