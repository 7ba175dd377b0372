"""nova's flavor-to-resources rule as heal_allocations applies it, and what it refuses."""

from __future__ import annotations

import pytest

from nova_reshape.consistency import resources
from nova_reshape.nova.instance import InstanceRecord
from tests.unit.nova_reshape.consistency.helpers import instance


def test_plain_flavor_is_vcpu_memory_and_root_disk():
    assert resources.flavor_resources(instance("a"), volume_backed=False) == {
        "VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 5}


def test_dedicated_policy_is_pcpu_and_no_vcpu():
    pinned = instance("a", vcpus=4, specs={"hw:cpu_policy": "dedicated"})
    assert resources.flavor_resources(pinned, volume_backed=False) == {
        "PCPU": 4, "MEMORY_MB": 1024, "DISK_GB": 5}


def test_volume_backed_instance_has_no_root_disk():
    assert resources.flavor_resources(instance("a"), volume_backed=True) == {
        "VCPU": 2, "MEMORY_MB": 1024}


def test_numbered_vgpu_groups_are_merged():
    gpu = instance("a", specs={"resources1:VGPU": "1", "resources2:VGPU": "1"})
    assert resources.flavor_resources(gpu, volume_backed=False)["VGPU"] == 2


@pytest.mark.parametrize(("specs", "expected"), [
    ({"resources:VGPU": "1"}, resources.Unhealable.VGPU),
    ({"resources:VGPU": "1", "accel:device_profile": "dp"}, resources.Unhealable.VGPU),
    ({"accel:device_profile": "dp"}, resources.Unhealable.DEVICE_PROFILE),
    ({"resources1:VGPU": "1"}, None),  # nova only looks at the unnumbered key
    ({"resources:VGPU": ""}, None),
    ({}, None),
])
def test_unhealable_flavors_are_nova_s(specs, expected):
    assert resources.unhealable(instance("a", specs=specs)) is expected


def test_missing_or_untranslatable_flavor_is_a_flavor_error():
    with pytest.raises(resources.FlavorError, match="no embedded flavor"):
        resources.flavor_resources(InstanceRecord(uuid="a", host="h", node="n"), False)
    with pytest.raises(resources.FlavorError, match="cannot be turned into resources"):
        resources.flavor_resources(instance("a", specs={"hw:tpm_version": "9"}), False)
