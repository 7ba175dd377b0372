"""PCI addresses compare as nova compares them; one rule says which devices are Neutron's."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.device_spec import parse_device_spec
from nova_reshape.nova.pci import NeutronTags, canonical_address, neutron_tags


def test_addresses_compare_lower_cased():
    assert canonical_address("0000:D8:00.0") == "0000:d8:00.0"


@pytest.mark.parametrize(("tags", "expected"), [
    ({}, NeutronTags()),
    ({"physical_network": "physnet1", "trusted": "true"}, NeutronTags("physnet1")),
    ({"physical_network": None, "remote_managed": "false"}, NeutronTags()),
    ({"remote_managed": "True"}, NeutronTags(remote_managed=True)),
    ({"remote_managed": True, "physical_network": "p2"}, NeutronTags("p2", True)),
    ({"remote_managed": "yes"}, NeutronTags(remote_managed=True)),
    ({"resource_class": "CUSTOM_NIC"}, NeutronTags()),
])
def test_one_rule_says_which_devices_are_neutrons(tags, expected):
    assert neutron_tags(tags) == expected
    assert neutron_tags(tags).belong_to_neutron == (expected != NeutronTags())


def test_the_tags_read_as_the_dry_run_lists_them():
    assert str(NeutronTags("physnet1", True)) == "physical_network physnet1, remote_managed"
    assert str(NeutronTags()) == "no neutron tag"


def test_device_spec_entries_use_the_rule():
    spec, = parse_device_spec('{"vendor_id": "15b3", "remote_managed": true}')
    assert spec.neutron == NeutronTags(remote_managed=True)
