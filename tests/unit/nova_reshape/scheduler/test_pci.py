"""PCI device pools: ordering, consumption, and the pools that need explicit requests."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler import pci
from nova_reshape.scheduler.errors import ScenarioError


def test_pci_pools_sorted_by_key_count_and_consumed_in_order():
    stats = pci.load_pools([
        {"vendor_id": "8086", "product_id": "1", "count": 1, "tags": {"physical_network": "p"}},
        {"vendor_id": "8086", "product_id": "1", "count": 2}])
    assert [p["count"] for p in stats.pools] == [2, 1]
    request = pci.PciRequest(count=2, spec=[{"vendor_id": "8086"}])
    stats.apply_requests([request])
    assert [p["count"] for p in stats.pools] == [1]
    with pytest.raises(pci.PciDeviceRequestFailed):
        stats.apply_requests([request])


def test_pci_vdpa_and_remote_managed_pools_need_explicit_requests():
    stats = pci.load_pools([{"vendor_id": "15b3", "count": 1, "tags": {"dev_type": "vdpa"}},
                            {"vendor_id": "15b3", "count": 1,
                             "tags": {"remote_managed": "true"}}])
    assert not stats.support_requests([pci.PciRequest(2, [{"vendor_id": "15b3"}])])
    assert stats.support_requests([pci.PciRequest(1, [{"dev_type": "vdpa"}])])
    assert stats.support_requests([pci.PciRequest(1, [{"remote_managed": "true"}])])


@pytest.mark.parametrize("raw", [[{"count": -1}], [{"count": True}], "pool", [{"tags": "x"}]])
def test_invalid_pci_pools(raw):
    with pytest.raises(ScenarioError):
        pci.load_pools(raw)
