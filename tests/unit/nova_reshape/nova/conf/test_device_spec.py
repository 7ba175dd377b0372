"""[pci] device_spec values: parsing, matching, and what nova refuses."""

from __future__ import annotations

import pytest

from nova_reshape.nova.conf.device_spec import parse_device_spec
from nova_reshape.nova.errors import NovaConfError


def test_object_and_list_forms():
    [gpu] = parse_device_spec('{"vendor_id": "10DE", "product_id": "20b5", "traits": "a, b"}')
    assert (gpu.vendor_id, gpu.traits) == ("10de", ("a", "b"))
    assert gpu.matches("0000:D8:00.0", "10de", "20b5")
    assert not gpu.matches("0000:d8:00.0", "10de", "20b6")
    both = parse_device_spec('[{"address": "0000:3b:00.*"}, {"devname": "eth0"}]')
    assert both[0].matches("0000:3B:00.4", "8086", "154c")
    assert not both[1].matches("0000:3b:00.4", "8086", "154c")  # by name: not offline


@pytest.mark.parametrize(("value", "message"), [
    ('"a string"', "is not a JSON object"),
    ('{"address": {"row": "1"}}', "address has unknown fields ['row']"),
    ('{"address": "0000:zz:00.0"}', "is not a PCI address pattern"),
])
def test_refused_entries(value, message):
    with pytest.raises(NovaConfError) as error:
        parse_device_spec(value)
    assert message in str(error.value)
