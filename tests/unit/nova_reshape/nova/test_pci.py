"""PCI addresses compare as nova compares them."""

from __future__ import annotations

from nova_reshape.nova.pci import canonical_address


def test_addresses_compare_lower_cased():
    assert canonical_address("0000:D8:00.0") == "0000:d8:00.0"
