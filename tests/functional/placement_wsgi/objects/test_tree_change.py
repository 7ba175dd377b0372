"""One tree's change in one transaction, on every engine.

Applying a :class:`TreeChange` must leave the database as the API's request
sequence for the same change does (the same seeded start twice, compared by
uuids and names), and any error must leave every table untouched.
"""

from __future__ import annotations

import dataclasses
import uuid as uuid_module
from typing import Any

import pytest
from sqlalchemy import text

from placement_wsgi import errors
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects import trait as trait_obj
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.inventory import Inventory
from placement_wsgi.objects.resource_provider import NewProvider
from placement_wsgi.objects.tree_change import (
    TreeChange,
    TreeCheck,
    apply_tree_change,
    read_with_changes,
)
from placement_wsgi.objects.tree_state import read_batch, read_trees
from tests.fixtures.config import make_conf
from tests.fixtures.databases import checksum, empty

ROOT, OLD, GPU0, GPU1 = (str(uuid_module.uuid5(uuid_module.NAMESPACE_DNS, name))
                         for name in ("root", "old", "gpu0", "gpu1"))
CONSUMERS = [str(uuid_module.uuid5(uuid_module.NAMESPACE_DNS, f"vm{n}")) for n in range(2)]
AGG1, AGG2 = (str(uuid_module.uuid5(uuid_module.NAMESPACE_DNS, name)) for name in ("a1", "a2"))
OPTIONS = {"incomplete_project": "incomplete", "incomplete_user": "incomplete"}


def _ok(response: Any) -> Any:
    assert response.ok, (response.status_code, response.text)
    return response.json() if response.content else None


def _seed(db_url: str) -> None:
    """A flat node: GPUs on the root, two instances using them, an old child."""
    with PlacementDirect(make_conf(db_url)) as client:
        _ok(client.post("/resource_providers", json={"uuid": ROOT, "name": "node"},
                        microversion="1.20"))
        _ok(client.post("/resource_providers", json={
            "uuid": OLD, "name": "old", "parent_provider_uuid": ROOT}, microversion="1.20"))
        _ok(client.put(f"/resource_providers/{ROOT}/inventories", json={
            "resource_provider_generation": 0, "inventories": {
                "VCPU": {"total": 16}, "MEMORY_MB": {"total": 4096}, "VGPU": {"total": 4}}},
            microversion="1.26"))
        _ok(client.put(f"/resource_providers/{OLD}/inventories", json={
            "resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 100}}},
            microversion="1.26"))
        _ok(client.put(f"/resource_providers/{ROOT}/traits", json={
            "resource_provider_generation": 1, "traits": ["COMPUTE_NODE"]},
            microversion="1.6"))
        _ok(client.put(f"/resource_providers/{ROOT}/aggregates", json={
            "resource_provider_generation": 2, "aggregates": [AGG1]}, microversion="1.19"))
        for consumer in CONSUMERS:
            _ok(client.put(f"/allocations/{consumer}", json={
                "allocations": {ROOT: {"resources": {"VCPU": 2, "VGPU": 1}}},
                "project_id": "project", "user_id": "user", "consumer_generation": None},
                microversion="1.28"))


def _generations(database: Database) -> dict[str, int]:
    (state,) = read_trees(database, [ROOT])
    return {provider["uuid"]: provider["generation"] for provider in state.providers}


def _reshape_change(database: Database) -> TreeChange:
    """Move the GPUs to two new children (one with a new custom class), drop the
    old child, change the root's traits and aggregates."""
    change = TreeChange(
        create=[NewProvider("node_gpu0", GPU0, ROOT),
                NewProvider("node_gpu1", GPU1, ROOT)],
        traits={ROOT: ["COMPUTE_NODE", "OWNER_NOVA"], GPU0: ["OWNER_NOVA", "CUSTOM_GPU_T"],
                GPU1: ["OWNER_NOVA"]},
        aggregates={ROOT: [AGG2]},
        inventories={ROOT: [Inventory("VCPU", 16), Inventory("MEMORY_MB", 4096)],
                     GPU0: [Inventory("VGPU", 2)], GPU1: [Inventory("CUSTOM_VGPU_T", 2)],
                     OLD: []},
        reshape=True,
        allocations=[
            ConsumerAllocations(CONSUMERS[0], "project", "user",
                                {ROOT: {"VCPU": 2}, GPU0: {"VGPU": 1}}, consumer_generation=1),
            ConsumerAllocations(CONSUMERS[1], "project", "user",
                                {ROOT: {"VCPU": 2}, GPU1: {"CUSTOM_VGPU_T": 1}},
                                consumer_generation=1)],
        delete=[OLD])
    generations = _generations(database)
    change.generations = {uuid: generations[uuid] for uuid in change.existing}
    return change


def _through_the_api(db_url: str, change: TreeChange) -> None:
    """The same change as the REST sequence a client without the bulk write sends."""
    with PlacementDirect(make_conf(db_url)) as client:
        traits, classes = change.custom_names()
        for name in traits:
            assert client.put(f"/traits/{name}", microversion="1.6").status_code in (201, 204)
        for name in classes:
            assert client.put(f"/resource_classes/{name}",
                              microversion="1.7").status_code in (201, 204)
        generations = dict(change.generations)
        for new in change.create:
            generations[new.uuid] = _ok(client.post("/resource_providers", json={
                "uuid": new.uuid, "name": new.name,
                "parent_provider_uuid": new.parent_uuid}, microversion="1.20"))["generation"]
        for uuid, names in change.traits.items():
            generations[uuid] = _ok(client.put(f"/resource_providers/{uuid}/traits", json={
                "resource_provider_generation": generations[uuid], "traits": names},
                microversion="1.6"))["resource_provider_generation"]
        for uuid, aggregates in change.aggregates.items():
            generations[uuid] = _ok(client.put(f"/resource_providers/{uuid}/aggregates", json={
                "resource_provider_generation": generations[uuid], "aggregates": aggregates},
                microversion="1.19"))["resource_provider_generation"]
        _ok(client.post("/reshaper", microversion="1.30", json={
            "inventories": {uuid: {
                "resource_provider_generation": generations[uuid],
                "inventories": {record.resource_class: {
                    key: value for key, value in record.as_dict().items()}
                    for record in records}} for uuid, records in change.inventories.items()},
            "allocations": {consumer.consumer_uuid: {
                "allocations": {rp: {"resources": resources}
                                for rp, resources in consumer.allocations.items()},
                "project_id": consumer.project_id, "user_id": consumer.user_id,
                "consumer_generation": consumer.consumer_generation}
                for consumer in change.allocations}}))
        for uuid in change.delete:
            _ok(client.delete(f"/resource_providers/{uuid}"))


def _state(database: Database) -> dict[str, Any]:
    """Everything the tree holds, by uuids and names (generations left out)."""
    (tree,) = read_trees(database, [ROOT])
    state = dataclasses.asdict(tree)
    for provider in state["providers"]:
        del provider["generation"]
    state["trait_names"] = [trait.name for trait in trait_obj.list_traits(database)]
    state["class_names"] = [rc.name for rc in rc_obj.list_resource_classes(database)]
    return state


@pytest.fixture
def seeded(db_url: str, database: Database) -> Database:
    _seed(db_url)
    return database


def test_one_transaction_leaves_what_the_request_sequence_leaves(seeded, db_url):
    """Twin runs on the same fresh database (a server engine has one per run):
    the bulk write, then emptied, seeded again and the request sequence."""
    before = _generations(seeded)
    after = apply_tree_change(seeded, _reshape_change(seeded), **OPTIONS)
    bulk = _state(seeded)
    assert after == _generations(seeded)

    empty(seeded)
    _seed(db_url)
    _through_the_api(db_url, _reshape_change(seeded))

    assert bulk == _state(seeded)
    assert {p["uuid"] for p in bulk["providers"]} == {ROOT, GPU0, GPU1}
    assert bulk["allocations"][CONSUMERS[1]]["allocations"][GPU1]["resources"] == {
        "CUSTOM_VGPU_T": 1}
    assert "CUSTOM_GPU_T" in bulk["trait_names"]
    assert after[ROOT] > before[ROOT]
    assert set(after) == {ROOT, GPU0, GPU1}


def test_a_change_without_allocations_replaces_inventories_as_put_does(seeded):
    database = seeded
    before = _generations(database)
    change = TreeChange(generations={OLD: before[OLD]},
                        inventories={OLD: [Inventory("DISK_GB", 200, reserved=200)]},
                        traits={OLD: ["CUSTOM_DISKS"]})
    after = apply_tree_change(database, change, **OPTIONS)
    (state,) = read_trees(database, [ROOT])
    assert state.inventories[OLD]["DISK_GB"]["total"] == 200
    assert state.traits[OLD] == ["CUSTOM_DISKS"]
    assert after == {OLD: before[OLD] + 2}  # traits, then inventory


def _refused(database: Database, change: TreeChange, error: type[Exception]) -> str:
    digest = checksum(database)
    with pytest.raises(error) as caught:
        apply_tree_change(database, change, **OPTIONS)
    assert checksum(database) == digest
    return str(caught.value)


def test_a_stale_generation_is_a_concurrent_update_and_writes_nothing(seeded):
    change = _reshape_change(seeded)
    change.generations[OLD] -= 1
    _refused(seeded, change, errors.ConcurrentUpdate)


def test_an_unknown_resource_class_writes_nothing(seeded):
    change = _reshape_change(seeded)
    change.inventories[GPU0] = [Inventory("NO_SUCH_CLASS", 2)]
    assert "NO_SUCH_CLASS" in _refused(seeded, change, errors.BadRequest)


def test_removing_inventory_in_use_writes_nothing(seeded):
    change = TreeChange(generations={ROOT: _generations(seeded)[ROOT]},
                        create=[NewProvider("node_gpu0", GPU0, ROOT)],
                        traits={GPU0: ["CUSTOM_NEW_TRAIT"]},
                        inventories={ROOT: [Inventory("VCPU", 16)]})
    _refused(seeded, change, errors.InventoryInUse)
    assert "CUSTOM_NEW_TRAIT" not in {t.name for t in trait_obj.list_traits(seeded)}


def test_a_name_clash_writes_nothing(seeded):
    change = _reshape_change(seeded)
    change.create[1] = NewProvider("node", GPU1, ROOT)
    assert "name: node" in _refused(seeded, change, errors.DuplicateName)


def test_deleting_a_provider_still_allocated_writes_nothing(seeded):
    change = _reshape_change(seeded)
    change.delete = [ROOT]
    change.generations[ROOT] = _generations(seeded)[ROOT]
    _refused(seeded, change, errors.Conflict)


def test_an_inconsistent_change_is_refused_before_any_write(seeded):
    change = _reshape_change(seeded)
    del change.generations[ROOT]
    assert "no generation given" in _refused(seeded, change, ValueError)


def test_new_providers_may_be_parents_of_later_ones(seeded):
    change = TreeChange(create=[NewProvider("node_gpu0", GPU0, ROOT),
                                NewProvider("node_gpu0_vf", GPU1, GPU0)])
    assert apply_tree_change(seeded, change, **OPTIONS) == {GPU0: 0, GPU1: 0}
    (state,) = read_trees(seeded, [ROOT])
    parents = {p["uuid"]: (p["parent_provider_uuid"], p["root_provider_uuid"])
               for p in state.providers}
    assert parents[GPU1] == (GPU0, ROOT) and parents[GPU0] == (ROOT, ROOT)


def test_a_name_used_twice_by_the_change_writes_nothing(seeded):
    change = TreeChange(create=[NewProvider("twice", GPU0, ROOT), NewProvider("twice", GPU1)])
    assert "name: twice" in _refused(seeded, change, errors.DuplicateName)


def test_a_parent_created_after_its_child_is_unknown_and_writes_nothing(seeded):
    change = TreeChange(create=[NewProvider("child", GPU1, GPU0),
                                NewProvider("parent", GPU0, ROOT)])
    assert "parent provider UUID does not exist" in _refused(seeded, change, errors.BadRequest)


class _Refusal(Exception):
    """What the caller's check raises in these tests."""


def test_the_check_sees_the_tree_as_the_change_leaves_it_before_commit(seeded):
    seen = []
    apply_tree_change(seeded, _reshape_change(seeded), **OPTIONS,
                      check=TreeCheck(ROOT, seen.append))
    (committed,) = read_trees(seeded, [ROOT])
    assert seen[-1] == committed
    assert {provider["uuid"] for provider in seen[-1].providers} == {ROOT, GPU0, GPU1}


def test_what_the_check_raises_rolls_the_change_back(seeded):
    def refuse(state):
        raise _Refusal(sorted(provider["uuid"] for provider in state.providers))

    digest = checksum(seeded)
    with pytest.raises(_Refusal) as caught:
        apply_tree_change(seeded, _reshape_change(seeded), **OPTIONS,
                          check=TreeCheck(ROOT, refuse))
    assert caught.value.args[0] == sorted([ROOT, GPU0, GPU1])  # it ran after the writes
    assert checksum(seeded) == digest


def test_read_with_changes_reads_what_a_commit_leaves_and_writes_nothing(seeded, db_url):
    digest = checksum(seeded)

    def providers(connection):
        return sorted(connection.execute(text("SELECT uuid FROM resource_providers")).scalars())

    previewed = read_with_changes(seeded, [_reshape_change(seeded)], providers, **OPTIONS)
    assert checksum(seeded) == digest  # rolled back
    assert read_with_changes(seeded, [], providers, **OPTIONS) == sorted([ROOT, OLD])
    apply_tree_change(seeded, _reshape_change(seeded), **OPTIONS)
    assert previewed == sorted([ROOT, GPU0, GPU1]) == read_with_changes(
        seeded, [], providers, **OPTIONS)
    # the read sees the whole changed tree, allocations moved included
    empty(seeded)
    _seed(db_url)
    def tree(connection):
        root_id = connection.execute(text(
            "SELECT id FROM resource_providers WHERE uuid = :u"), {"u": ROOT}).scalar()
        return read_batch(connection, [root_id])[0]

    state = read_with_changes(seeded, [_reshape_change(seeded)], tree, **OPTIONS)
    assert state.allocations[CONSUMERS[1]]["allocations"][GPU1]["resources"] == {
        "CUSTOM_VGPU_T": 1}
    change = _reshape_change(seeded)
    change.generations[OLD] -= 1
    with pytest.raises(errors.ConcurrentUpdate):
        read_with_changes(seeded, [change], providers, **OPTIONS)


def test_placement_direct_previews_only_while_open(db_url):
    direct = PlacementDirect(make_conf(db_url))
    with pytest.raises(RuntimeError, match="not open"):
        direct.read_with_changes([], lambda connection: None)
    with direct:
        assert direct.read_with_changes([], lambda connection: 42) == 42


def _marks(database: Database) -> list[str]:
    with database.engine.connect() as connection:
        return list(connection.exec_driver_sql("SELECT note FROM tool_marks").scalars())


@pytest.fixture
def marks(seeded):
    """A table of a tool's own beside Placement's (dropped by the next test's emptying)."""
    with seeded.engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE tool_marks (note VARCHAR(80))")
    return seeded


def test_what_the_record_writes_commits_with_the_change(marks):
    def record(connection, state):
        connection.exec_driver_sql(
            "INSERT INTO tool_marks (note) VALUES ('%d providers')" % len(state.providers))

    apply_tree_change(marks, _reshape_change(marks), **OPTIONS,
                      check=TreeCheck(ROOT, lambda state: None, record))
    assert _marks(marks) == ["3 providers"]


def test_the_record_is_rolled_back_with_a_refused_change(marks):
    def refuse(state):
        raise _Refusal("no")

    def record(connection, state):  # pragma: no cover - must not run
        raise AssertionError("the record runs only once the check passed")

    digest = checksum(marks)
    with pytest.raises(_Refusal):
        apply_tree_change(marks, _reshape_change(marks), **OPTIONS,
                          check=TreeCheck(ROOT, refuse, record))

    def failing_record(connection, state):
        connection.exec_driver_sql("INSERT INTO tool_marks (note) VALUES ('written')")
        raise _Refusal("the record failed")

    with pytest.raises(_Refusal):
        apply_tree_change(marks, _reshape_change(marks), **OPTIONS,
                          check=TreeCheck(ROOT, lambda state: None, failing_record))
    assert _marks(marks) == [] and checksum(marks) == digest


def test_a_change_deleting_the_checked_root_shows_the_check_a_tree_without_providers(seeded):
    change = TreeChange(delete=[OLD, ROOT], inventories={ROOT: [], OLD: []}, reshape=True,
                        allocations=[ConsumerAllocations(consumer, "project", "user", {},
                                                         consumer_generation=1)
                                     for consumer in CONSUMERS])
    generations = _generations(seeded)
    change.generations = {uuid: generations[uuid] for uuid in change.existing}
    seen, recorded = [], []
    apply_tree_change(seeded, change, **OPTIONS, check=TreeCheck(
        ROOT, seen.append, lambda connection, state: recorded.append(state)))
    [state] = seen
    assert (state.root, state.providers, state.allocations) == (ROOT, [], {})
    assert recorded == [state]
    assert list(read_trees(seeded, [ROOT])) == []
