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
