"""nova's RequestSpec as the scheduler reads it: hints, destination, group mapping."""

from __future__ import annotations

import uuid

from nova_reshape.scheduler.request_group import RequestGroup
from nova_reshape.scheduler.request_spec import (
    Destination,
    InstanceGroup,
    RequestSpec,
    cell_uuid,
)


def test_a_cell_has_one_stable_uuid():
    assert cell_uuid("cell1") == cell_uuid("cell1") != cell_uuid("cell2")
    assert uuid.UUID(cell_uuid("cell1")).version == 5
    assert Destination(cell="cell1").cell_uuid == cell_uuid("cell1")
    assert Destination().cell_uuid is None


def test_destination_ands_aggregate_lists_and_unions_forbidden_ones():
    destination = Destination()
    destination.require_aggregates(["a", "b"])
    destination.require_aggregates(["c"])
    destination.forbid_aggregates(["x"])
    destination.forbid_aggregates(["y", "x"])
    assert destination.aggregates == ["a,b", "c"]
    assert destination.forbidden_aggregates == {"x", "y"}


def test_one_element_hints_are_unwrapped():
    spec = RequestSpec(scheduler_hints={"group": ["g1"], "query": ["a", "b"]})
    assert spec.get_scheduler_hint("group") == "g1"
    assert spec.get_scheduler_hint("query") == ["a", "b"]
    assert spec.get_scheduler_hint("nope", "default") == "default"
    assert not spec.is_rebuild
    assert RequestSpec(scheduler_hints={"_nova_check_type": ["rebuild"]}).is_rebuild


def test_group_mapping_only_of_groups_that_were_placed():
    spec = RequestSpec(requested_resources=[
        RequestGroup("port-1", provider_uuids=["rp-1"]), RequestGroup("port-2"),
        RequestGroup(None, provider_uuids=["rp-9"])])
    assert spec.get_request_group_mapping() == {"port-1": ["rp-1"]}


def test_an_instance_group_lists_its_policy_the_legacy_way():
    assert InstanceGroup(policy="anti-affinity").policies == ["anti-affinity"]
    assert InstanceGroup().policies == []
