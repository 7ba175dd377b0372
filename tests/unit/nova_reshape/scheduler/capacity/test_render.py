"""The capacity table as text."""

from __future__ import annotations

import json

from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity, HostFit
from nova_reshape.scheduler.capacity.render import flavor_heading, render_json, render_report


def test_one_block_per_flavor_with_reasons_and_notes():
    report = CapacityReport([
        FlavorCapacity("m1", [HostFit("cmp-a", "a", True, 16),
                              HostFit("cmp-bb", "b", False, 0, "ComputeFilter: disabled")]),
        FlavorCapacity("x1", [], ["a request filter refuses it: no"])], notes=["assumed up"])
    assert render_report(report).splitlines() == [
        "flavor m1: 1 of 2 host(s) valid, 16 more fit",
        "  cmp-a   valid  16",
        "  cmp-bb  -       0  ComputeFilter: disabled",
        "flavor x1: 0 of 0 host(s) valid, 0 more fit",
        "  note: a request filter refuses it: no",
        "note: assumed up"]


def test_no_flavor_says_so():
    assert render_report(CapacityReport()) == "no flavor to check\n"
    assert flavor_heading(FlavorCapacity("m")) == "flavor m: 0 of 0 host(s) valid, 0 more fit"


def test_the_json_document_is_what_json_dumps_writes_byte_for_byte():
    report = CapacityReport([
        FlavorCapacity("m1", [HostFit("cmp-a", "a", True, 16),
                              HostFit('cmp-"ü"\\', "b", False, 0, "ComputeFilter: ø\n")]),
        FlavorCapacity("x1", [], ["a request filter refuses it: no"]),
        FlavorCapacity("é", [HostFit("cmp-c", "c", True, 1)])])
    for each in (report, CapacityReport(), CapacityReport(report.flavors[1:2])):
        assert render_json(each) == json.dumps(each.to_dict(), indent=2) + "\n"
