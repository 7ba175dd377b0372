"""The capacity table as text."""

from __future__ import annotations

from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity, HostFit
from nova_reshape.scheduler.capacity.render import flavor_heading, render_report


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
