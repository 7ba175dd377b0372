"""What ties a candidate's slots together: summed classes fit the provider (constraints.py)."""

from __future__ import annotations

import collections

from tests.functional.placement_wsgi.candidates.world import World


def test_sums_respect_capacity_and_max_unit(two_computes: World) -> None:
    # numa1: capacity 4, used 1, max_unit 2 -> at most 2 more per request
    body = two_computes.candidates(
        "resources1=VCPU:1&resources2=VCPU:1&resources3=VCPU:1&group_policy=none"
        "&in_tree1={cn1}&in_tree2={cn1}&in_tree3={cn1}")
    totals = collections.Counter()
    for request in two_computes.requests(body):
        assert request.get("numa1", {}).get("VCPU", 0) <= 2
        assert request.get("numa0", {}).get("VCPU", 0) <= 2
        totals[tuple(sorted((name, r["VCPU"]) for name, r in request.items()))] += 1
    # 3 ordered groups over (numa0 <= 2, numa1 <= 2): 2^3 assignments minus the two
    # that put all three on one child
    assert sum(totals.values()) == 6
