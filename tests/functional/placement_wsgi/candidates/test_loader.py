"""What the loader reads for the summaries: the classes shown per microversion (loader.py)."""

from __future__ import annotations

from tests.functional.placement_wsgi.candidates.world import World


def test_summaries_by_version(two_computes: World) -> None:
    query = "resources=VCPU:1&in_tree={cn1}&limit=1"
    old = two_computes.summaries(two_computes.candidates(query, "1.26"))
    (only,) = old.values()
    assert set(only) == {"resources", "traits"}
    assert set(only["resources"]) == {"VCPU"}
    nested = two_computes.summaries(two_computes.candidates(query, "1.29"))
    assert set(nested) == {"cn1", "numa0", "numa1"}
    assert nested["cn1"]["resources"] == {"MEMORY_MB": {"capacity": 1024, "used": 0}}
    assert nested["numa1"]["resources"] == {"VCPU": {"capacity": 4, "used": 1}}
    assert nested["numa0"]["traits"] == ["CUSTOM_FAST"]
    assert set(two_computes.summaries(two_computes.candidates(query, "1.16"))) <= {
        "numa0", "numa1"}
    assert "traits" not in next(iter(two_computes.candidates(
        query, "1.16")["provider_summaries"].values()))


def test_summaries_show_every_class_from_1_27(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.27")
    assert two_computes.summaries(body)["cn2"]["resources"] == {
        "VCPU": {"capacity": 8, "used": 0}, "MEMORY_MB": {"capacity": 2048, "used": 0}}
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.26")
    assert two_computes.summaries(body)["cn2"]["resources"] == {
        "VCPU": {"capacity": 8, "used": 0}}
