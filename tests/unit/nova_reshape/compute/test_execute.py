"""A node's plan as the one in-process tree change: what it carries and how it is sent."""

from __future__ import annotations

import pytest

from nova_reshape import exception
from nova_reshape.compute.execute import (
    RestPlanWriter,
    WrittenGenerations,
    apply_change,
    tree_change,
)
from nova_reshape.compute.plan import NewProvider, NodePlan
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport import Transport
from placement_wsgi import errors

ROOT, GPU, OLD, SIBLING = "root-uuid", "gpu-uuid", "old-uuid", "sibling-uuid"


def _plan() -> NodePlan:
    return NodePlan(
        "node", ROOT, create=[NewProvider("node_gpu", GPU, ROOT)], delete=[OLD],
        traits={GPU: ["OWNER_NOVA"], ROOT: ["COMPUTE_NODE", "OWNER_NOVA"]},
        final_inventories={ROOT: {"VCPU": {"total": 8}}, GPU: {"VGPU": {"total": 2}}},
        allocations={"vm": {"allocations": {ROOT: {"resources": {"VCPU": 1}},
                                            GPU: {"resources": {"VGPU": 1}}}}},
        reshape=True)


def test_the_change_carries_the_plan_with_the_generations_and_owners_read():
    read = {"vm": {"allocations": {}, "project_id": "p", "user_id": "u",
                   "consumer_generation": 3}}
    change = tree_change(_plan(), {ROOT: 5, OLD: 2, SIBLING: 9}, read)
    assert change.generations == {ROOT: 5, OLD: 2}  # only the existing ones touched
    assert [(p.name, p.uuid, p.parent_uuid) for p in change.create] == [
        ("node_gpu", GPU, ROOT)]
    assert {rp: [(r.resource_class, r.total) for r in records]
            for rp, records in change.inventories.items()} == {
        GPU: [("VGPU", 2)], OLD: [], ROOT: [("VCPU", 8)]}
    (consumer,) = change.allocations
    assert (consumer.consumer_uuid, consumer.project_id, consumer.user_id,
            consumer.consumer_generation) == ("vm", "p", "u", 3)
    assert consumer.allocations == {ROOT: {"VCPU": 1}, GPU: {"VGPU": 1}}
    assert change.reshape and change.delete == [OLD]


def test_without_moves_the_change_has_the_changed_inventories_only():
    plan = NodePlan("node", ROOT, inventories={ROOT: {"VCPU": {"total": 4}}},
                    final_inventories={ROOT: {"VCPU": {"total": 4}}, OLD: {}})
    change = tree_change(plan, {ROOT: 1, OLD: 1}, {})
    assert not change.reshape and not change.allocations
    assert list(change.inventories) == [ROOT] and change.generations == {ROOT: 1}


class _Writer:
    """In-process on the database as far as the executor can tell; raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def apply_tree_change(self, change, check=None):
        raise self.error


@pytest.mark.parametrize(("error", "expected"), [
    (errors.ConcurrentUpdate("stale"), exception.PlacementReshapeConflict),
    (errors.InventoryInUse("in use"), exception.InventoryInUse),
    (errors.DuplicateName("taken"), exception.ReshapeFailed),
])
def test_placement_errors_become_the_nova_exceptions_of_the_request_sequence(error, expected):
    with pytest.raises(expected):
        apply_change(_Writer(error), tree_change(_plan(), {ROOT: 1, OLD: 1}, {}), reshape=True)


class _Answer:
    """A 200 answer with ``body``."""

    status_code = 200

    def __init__(self, body) -> None:
        self.body = body
        self.text = str(body)

    def __bool__(self) -> bool:
        return True

    def json(self):
        return self.body


class _Answering(Transport):
    """Answers each PUT of traits with ``traits`` (what Placement says it now holds)."""

    def __init__(self, traits) -> None:
        super().__init__()
        self.traits = traits
        self.sent: list[tuple[str, str]] = []

    def request(self, method, url, json=None, microversion=None, headers=None):
        self.sent.append((method, url))
        return _Answer({"traits": self.traits, "resource_provider_generation": 5})


def _traits_plan() -> NodePlan:
    return NodePlan("node", ROOT, traits={ROOT: ["COMPUTE_NODE", "OWNER_NOVA"]})


def test_a_traits_put_answered_with_what_was_sent_gives_the_new_generation():
    tree = ProviderTree()
    tree.new_root("node", ROOT, generation=4)
    placement = _Answering(["OWNER_NOVA", "COMPUTE_NODE"])
    written = RestPlanWriter(placement).write(_traits_plan(), tree, {})
    assert placement.sent == [("PUT", f"/resource_providers/{ROOT}/traits")]
    assert written == WrittenGenerations({ROOT: 5}, {})  # what the read-back's listing must show


class _Refused(_Answer):
    """A refusal: ``status``, no success."""

    def __init__(self, status: int) -> None:
        super().__init__({"errors": [{"status": status, "detail": "refused"}]})
        self.status_code = status

    def __bool__(self) -> bool:
        return False


class _Refusing(Transport):
    """Answers every request with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status

    def request(self, method, url, json=None, microversion=None, headers=None):
        return _Refused(self.status)


@pytest.mark.parametrize("status,expected", [
    (409, exception.ResourceProviderUpdateConflict),  # taken since the check: read again
    (400, exception.ResourceProviderCreationFailed)])
def test_a_provider_create_refused_as_a_conflict_is_one(status, expected):
    tree = ProviderTree()
    tree.new_root("node", ROOT, generation=4)
    plan = NodePlan("node", ROOT, create=[NewProvider("node_gpu", GPU, ROOT)])
    with pytest.raises(expected):
        RestPlanWriter(_Refusing(status)).write(plan, tree, {})


def test_a_traits_put_answered_with_other_traits_fails_the_node():
    """The read-back takes the written traits as answered, so the answer is checked."""
    tree = ProviderTree()
    tree.new_root("node", ROOT, generation=4)
    with pytest.raises(exception.ResourceProviderUpdateFailed, match="answered traits"):
        RestPlanWriter(_Answering(["COMPUTE_NODE"])).write(_traits_plan(), tree, {})
