"""Live explain helpers that need no database: candidate roots and nova's merge."""

from __future__ import annotations

from nova_reshape.scheduler.live.placement import PlacementView, candidate_roots, merged
from nova_reshape.scheduler.live.reasons import Reason, RootVerdict


def _body(*pairs, sharing=()):
    """Allocation requests over ``(provider, root)`` pairs, one request each."""
    return {"allocation_requests": [{"allocations": {p: {"resources": {"VCPU": 1}}}}
                                    for p, _ in pairs],
            "provider_summaries": {p: {"root_provider_uuid": r,
                                       "traits": ["MISC_SHARES_VIA_AGGREGATE"]
                                       if p in sharing else []} for p, r in pairs}}


def test_candidate_roots_are_the_trees_not_the_sharing_providers():
    body = _body(("cn1", "cn1"), ("cn2-gpu", "cn2"), ("nfs", "nfs"), sharing={"nfs"})
    assert candidate_roots(body) == {"cn1", "cn2"}


def test_merge_adds_requests_and_keeps_the_first_querys_reasons_for_the_rest():
    first = PlacementView(_body(("cn1", "cn1")), [
        RootVerdict("cn2", "cn2", "", Reason.CAPACITY, "PCPU"),
        RootVerdict("cn3", "cn3", "", Reason.MISSING_CLASS, "PCPU")], {"cn1": "a"})
    fallback = PlacementView(_body(("cn2", "cn2")), [
        RootVerdict("cn3", "cn3", "", Reason.CAPACITY, "VCPU")], {"cn1": "a"})
    view = merged([first, fallback])
    assert view.candidate_roots == {"cn1", "cn2"}
    assert [(v.uuid, v.detail) for v in view.verdicts] == [("cn3", "PCPU")]
    assert len(view.body["allocation_requests"]) == 2
    assert merged([first]) is first
