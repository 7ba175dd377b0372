"""The capacity table's records and its documented JSON document."""

from __future__ import annotations

from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity, HostFit


def flavor() -> FlavorCapacity:
    return FlavorCapacity("m1.small", [HostFit("cmp-a", "u-a", True, 4),
                                       HostFit("cmp-b", "u-b", False, 0, "ComputeFilter: down"),
                                       HostFit("cmp-c", "u-c", True, 7)])


def test_total_and_valid_hosts():
    table = flavor()
    assert table.total == 11
    assert sorted(table.valid_hosts()) == ["u-a", "u-c"]
    assert table.by_uuid()["u-b"].reason == "ComputeFilter: down"


def test_json_document_is_exactly_the_documented_shape():
    report = CapacityReport([flavor()], notes=["not in the document"])
    assert report.to_dict() == {"flavors": [{
        "name": "m1.small", "total": 11,
        "hosts": [{"name": "cmp-a", "valid": True, "fits": 4, "reason": ""},
                  {"name": "cmp-b", "valid": False, "fits": 0,
                   "reason": "ComputeFilter: down"},
                  {"name": "cmp-c", "valid": True, "fits": 7, "reason": ""}]}]}
    assert list(report.by_name()) == ["m1.small"] and list(report) == report.flavors
