"""nova's PCI vocabulary: addresses, device types, held devices, requests from ports."""

from __future__ import annotations

import pytest

from nova_reshape.nova.pci import PciDevice, PciDeviceType, PciRequest, canonical_address


def test_addresses_compare_lower_cased():
    assert canonical_address("0000:D8:00.0") == "0000:d8:00.0"


def test_device_types_are_novas_dev_type_values():
    assert [kind.value for kind in PciDeviceType] == ["type-PCI", "type-PF", "type-VF", "vdpa"]
    assert PciDeviceType("type-VF") is PciDeviceType.VF


@pytest.mark.parametrize(("status", "instance", "held"), [
    ("allocated", "i1", True), ("claimed", "i1", True), ("available", None, False),
    ("allocated", None, False), ("removed", "i1", False)])
def test_a_device_is_held_when_allocated_or_claimed_by_an_instance(status, instance, held):
    device = PciDevice(1, "0000:d8:00.0", "10de", "20b5", "type-PCI", status,
                       instance_uuid=instance)
    assert device.held is held


def test_a_request_without_an_alias_comes_from_a_neutron_port():
    assert PciRequest(1, ({"physical_network": "physnet1"},)).from_neutron_port
    assert not PciRequest(1, ({"vendor_id": "10de"},), alias_name="a100").from_neutron_port
