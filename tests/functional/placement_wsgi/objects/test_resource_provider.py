"""Resource provider objects on every engine: races on names and trees.

The API-level behaviour is in gabbits/resource-provider-*.yaml; these tests
run writers in parallel threads and then check invariants that a lost race
would break: one winner per name, no loops, every root id equal to the top
of its parent chain.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects import resource_provider as rp_obj
from tests.fixtures.threads import in_parallel

_providers = tables.resource_providers


def _assert_trees_consistent(database) -> dict[int, tuple[int | None, int]]:
    """No loops, and every root_provider_id is the top of its parent chain."""
    rows = database.read(lambda connection: connection.execute(sa.select(
        _providers.c.id, _providers.c.parent_provider_id,
        _providers.c.root_provider_id)).all())
    parents = {row.id: row.parent_provider_id for row in rows}
    for row in rows:
        seen = {row.id}
        top = row.id
        while parents[top] is not None:
            top = parents[top]
            assert top not in seen, f"loop through provider {top}"
            seen.add(top)
        assert row.root_provider_id == top
    return {row.id: (row.parent_provider_id, row.root_provider_id) for row in rows}


def test_concurrent_creates_of_one_name_have_one_winner(database):
    results = in_parallel(
        [lambda: rp_obj.create_resource_provider(database, "contested")] * 4)
    created = [result for result in results if isinstance(result, rp_obj.ResourceProvider)]
    clashes = [result for result in results if isinstance(result, errors.DuplicateName)]
    assert len(created) == 1 and len(clashes) == 3, results
    assert str(clashes[0]) == "Conflicting resource provider name: contested already exists."
    listed = rp_obj.list_resource_providers(database, rp_obj.ProviderFilters())
    assert [provider.uuid for provider in listed] == [created[0].uuid]


def test_opposite_concurrent_reparents_never_make_a_loop(database):
    one = rp_obj.create_resource_provider(database, "one")
    two = rp_obj.create_resource_provider(database, "two")
    results = in_parallel([
        lambda: rp_obj.update_resource_provider(
            database, one.uuid, "one", two.uuid, allow_reparenting=True),
        lambda: rp_obj.update_resource_provider(
            database, two.uuid, "two", one.uuid, allow_reparenting=True),
    ])
    succeeded = [result for result in results if isinstance(result, rp_obj.ResourceProvider)]
    assert len(succeeded) == 1, results
    refused = [result for result in results if isinstance(result, errors.BadRequest)]
    assert len(refused) == 1 and "creating loop" in str(refused[0])
    _assert_trees_consistent(database)


def test_children_created_during_a_reparent_get_the_new_root(database):
    old_root = rp_obj.create_resource_provider(database, "old root")
    new_root = rp_obj.create_resource_provider(database, "new root")
    middle = rp_obj.create_resource_provider(database, "middle", parent_uuid=old_root.uuid)
    calls: list[Callable[[], object]] = [
        lambda: rp_obj.update_resource_provider(
            database, middle.uuid, "middle", new_root.uuid, allow_reparenting=True)]
    calls += [
        (lambda index=index: rp_obj.create_resource_provider(
            database, f"leaf {index}", parent_uuid=middle.uuid))
        for index in range(4)]
    results = in_parallel(calls)
    assert all(isinstance(result, rp_obj.ResourceProvider) for result in results), results
    _assert_trees_consistent(database)
    tree = rp_obj.list_resource_providers(database, rp_obj.ProviderFilters(in_tree=middle.uuid))
    assert {provider.name for provider in tree} == {
        "new root", "middle", "leaf 0", "leaf 1", "leaf 2", "leaf 3"}


def test_a_parent_deleted_during_child_creation_is_reported_not_dangled(database):
    parent = rp_obj.create_resource_provider(database, "parent")
    results = in_parallel([
        lambda: rp_obj.delete_resource_provider(database, parent.uuid),
        lambda: rp_obj.create_resource_provider(database, "child", parent_uuid=parent.uuid),
    ])
    deleted, created = results
    if isinstance(created, rp_obj.ResourceProvider):
        # The child won: the delete saw it.
        assert isinstance(deleted, errors.Conflict)
        assert deleted.code == errors.PROVIDER_CANNOT_DELETE_PARENT
    else:
        assert deleted is None
        assert isinstance(created, errors.BadRequest)
        assert "parent provider UUID does not exist." in str(created)
    _assert_trees_consistent(database)


def test_update_reports_a_name_taken_by_another_provider(database):
    rp_obj.create_resource_provider(database, "taken")
    mine = rp_obj.create_resource_provider(database, "mine")
    with pytest.raises(errors.DuplicateName) as raised:
        rp_obj.update_resource_provider(database, mine.uuid, "taken")
    assert str(raised.value) == "Conflicting resource provider taken already exists."
    assert rp_obj.get_resource_provider(database, mine.uuid).name == "mine"


def test_delete_refuses_a_provider_with_any_allocation_row(database):
    provider = rp_obj.create_resource_provider(database, "allocated")
    database.write(lambda connection: connection.execute(tables.allocations.insert().values(
        resource_provider_id=provider.id, consumer_id="c0ffee00-0000-0000-0000-000000000000",
        resource_class_id=0, used=1)))
    with pytest.raises(errors.Conflict) as raised:
        rp_obj.delete_resource_provider(database, provider.uuid)
    assert raised.value.code == errors.PROVIDER_INUSE
    assert rp_obj.get_resource_provider(database, provider.uuid).uuid == provider.uuid


def _tree(database, name: str, depth: int) -> list[rp_obj.ResourceProvider]:
    """A chain of ``depth`` providers under a root named ``name``: root first."""
    chain = [rp_obj.create_resource_provider(database, name)]
    for level in range(1, depth):
        chain.append(rp_obj.create_resource_provider(database, f"{name}-{level}",
                                                     parent_uuid=chain[-1].uuid))
    return chain


def _remaining(database) -> set[str]:
    return set(database.read(lambda connection: connection.execute(
        sa.select(_providers.c.uuid)).scalars().all()))


def test_several_trees_are_deleted_at_once_children_first(database):
    first, second = _tree(database, "first", 3), _tree(database, "second", 2)
    sibling = rp_obj.create_resource_provider(database, "sibling", parent_uuid=first[0].uuid)
    kept = rp_obj.create_resource_provider(database, "kept")
    database.write(rp_obj.delete_providers,
                   [first[2].uuid, sibling.uuid, second[1].uuid, first[1].uuid,
                    second[0].uuid, first[0].uuid])
    assert _remaining(database) == {kept.uuid}
    _assert_trees_consistent(database)


@pytest.mark.parametrize("refused, code", [
    ("parent before its child", errors.PROVIDER_CANNOT_DELETE_PARENT),
    ("allocated", errors.PROVIDER_INUSE),
    ("unknown", None),
    ("listed twice", None),
])
def test_deleting_several_refuses_the_first_as_one_delete_would_and_deletes_none(
        database, refused, code):
    chain = _tree(database, "chain", 2)
    other = rp_obj.create_resource_provider(database, "other")
    uuids = {"parent before its child": [other.uuid, chain[0].uuid, chain[1].uuid],
             "allocated": [chain[1].uuid, other.uuid, chain[0].uuid],
             "unknown": [chain[1].uuid, "c0ffee00-0000-0000-0000-00000000000f"],
             "listed twice": [chain[1].uuid, chain[1].uuid]}[refused]
    if refused == "allocated":
        database.write(lambda connection: connection.execute(tables.allocations.insert().values(
            resource_provider_id=other.id, consumer_id="c0ffee00-0000-0000-0000-000000000000",
            resource_class_id=0, used=1)))
    with pytest.raises(errors.NotFound if code is None else errors.Conflict) as raised:
        database.write(rp_obj.delete_providers, uuids)
    if code is not None:
        assert raised.value.code == code
    named = {"parent before its child": chain[0].uuid, "allocated": other.uuid,
             "unknown": uuids[-1], "listed twice": chain[1].uuid}[refused]
    assert named in str(raised.value)
    assert _remaining(database) == {chain[0].uuid, chain[1].uuid, other.uuid}
