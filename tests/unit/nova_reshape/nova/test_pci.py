"""nova's PCI vocabulary: addresses, device types, held devices, requests from ports,
and the one rule that says which devices are Neutron's."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.device_spec import parse_device_spec
from nova_reshape.nova.pci import (
    NeutronTags,
    PciDevice,
    PciDeviceType,
    PciRequest,
    canonical_address,
    neutron_tags,
)


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


@pytest.mark.parametrize(("tags", "expected", "neutrons"), [
    ({}, NeutronTags(), False),
    ({"physical_network": "physnet1", "trusted": "true"}, NeutronTags("physnet1"), True),
    ({"physical_network": None, "remote_managed": "false"}, NeutronTags(), False),
    # nova 34 reports a remote_managed device without a physical network itself.
    ({"remote_managed": "True"}, NeutronTags(remote_managed=True), False),
    ({"remote_managed": True, "physical_network": "p2"}, NeutronTags("p2", True), True),
    ({"remote_managed": "yes"}, NeutronTags(remote_managed=True), False),
    ({"resource_class": "CUSTOM_NIC"}, NeutronTags(), False),
])
def test_only_a_physical_network_makes_a_device_neutrons(tags, expected, neutrons):
    assert neutron_tags(tags) == expected
    assert neutron_tags(tags).belong_to_neutron is neutrons
    assert neutron_tags(tags).tagged is (expected != NeutronTags())


def test_the_tags_read_as_the_dry_run_lists_them():
    assert str(NeutronTags("physnet1", True)) == "physical_network physnet1, remote_managed"
    assert str(NeutronTags()) == "no neutron tag"


def test_device_spec_entries_use_the_rule():
    spec, = parse_device_spec('{"vendor_id": "15b3", "remote_managed": true}')
    assert spec.neutron == NeutronTags(remote_managed=True)
