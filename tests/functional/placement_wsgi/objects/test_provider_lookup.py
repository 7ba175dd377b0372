"""Finding a provider with its parent and root, and its generation checks (provider_lookup.py)."""

from __future__ import annotations

import uuid as uuid_module

import pytest

from placement_wsgi import errors
from placement_wsgi.objects import provider_lookup as lookup
from tests.fixtures import seed


def test_a_provider_comes_with_its_parent_and_root(database):
    root = seed.add_provider(database, "root")
    child = seed.add_provider(database, "child", parent_uuid=root)
    leaf = seed.add_provider(database, "leaf", parent_uuid=child)
    found = lookup.require_provider(database, leaf)
    assert (found.name, found.parent_provider_uuid, found.root_provider_uuid) == (
        "leaf", child, root)
    top = lookup.require_provider(database, root)
    assert (top.parent_provider_uuid, top.root_provider_uuid, top.generation) == (None, root, 0)
    assert top.modified_at == top.created_at


def test_a_missing_provider_is_a_404_with_the_routes_message(database):
    missing = str(uuid_module.uuid4())
    assert database.read(lookup.find_provider, missing) is None
    with pytest.raises(errors.NotFound, match=f"No resource provider with uuid {missing} found"):
        lookup.require_provider(database, missing)
    with pytest.raises(errors.NotFound, match="^gone$"):
        lookup.require_provider(database, missing, "gone")


def test_generations_bump_only_from_the_expected_value(database):
    one, two = seed.add_provider(database), seed.add_provider(database)
    ids = {uuid: lookup.require_provider(database, uuid).id for uuid in (one, two)}
    assert database.write(lookup.bump_generation, ids[one], 0) == 1
    assert database.write(lookup.bump_generations, {ids[one]: 1, ids[two]: 0})
    assert not database.write(lookup.bump_generations, {ids[one]: 0, ids[two]: 0})  # stale
    with pytest.raises(errors.ConcurrentUpdate, match="another process changed"):
        database.write(lookup.bump_or_conflict, {ids[two]: 0})
    assert database.write(lookup.bump_generations, {})
    provider = lookup.require_provider(database, two)
    lookup.check_generation(provider, provider.generation)
    with pytest.raises(errors.ConcurrentUpdate, match=lookup.GENERATION_CONFLICT[:20]):
        lookup.check_generation(provider, 0, lookup.GENERATION_CONFLICT)


def _generations(database, ids):
    return {provider_id: lookup.require_provider(database, uuid).generation
            for uuid, provider_id in ids.items()}


class _Refused(Exception):
    pass


def _bump_or_roll_back(database, expected) -> bool:
    """bump_generations in a write that is rolled back when it returns False."""
    def body(connection):
        if not lookup.bump_generations(connection, expected):
            raise _Refused()
        return True

    try:
        return database.write(body)
    except _Refused:
        return False


def test_many_generations_bump_together_or_not_at_all_when_one_moved(database):
    """More providers than psycopg caches a statement's parameters for (50): the
    bump is one statement whatever their number; a single stale generation makes
    it report False, and the caller's rollback leaves every provider as it was."""
    uuids = [seed.add_provider(database, f"rp{n}") for n in range(60)]
    ids = {uuid: lookup.require_provider(database, uuid).id for uuid in uuids}
    bystander = seed.add_provider(database, "bystander")
    assert _bump_or_roll_back(database, {ids[uuid]: 0 for uuid in uuids})
    assert set(_generations(database, ids).values()) == {1}
    assert lookup.require_provider(database, bystander).generation == 0

    moved = uuids[37]
    database.write(lookup.bump_generation, ids[moved], 1)  # another writer committed
    assert not _bump_or_roll_back(database, {provider_id: 1 for provider_id in ids.values()})
    after = _generations(database, ids)
    assert after.pop(ids[moved]) == 2
    assert set(after.values()) == {1}
    assert lookup.require_provider(database, bystander).generation == 0


def test_a_generation_bump_matches_each_provider_at_its_own_generation(database):
    """(id, generation) pairs, not ids and generations apart: provider A at 1 and B
    at 0 do not match an expectation of A at 0 and B at 1."""
    one, two = seed.add_provider(database), seed.add_provider(database)
    ids = {uuid: lookup.require_provider(database, uuid).id for uuid in (one, two)}
    database.write(lookup.bump_generation, ids[one], 0)
    assert not _bump_or_roll_back(database, {ids[one]: 0, ids[two]: 1})
    assert _generations(database, ids) == {ids[one]: 1, ids[two]: 0}
    assert _bump_or_roll_back(database, {ids[one]: 1, ids[two]: 0})
    assert _generations(database, ids) == {ids[one]: 2, ids[two]: 1}
