"""Aggregate objects on every engine: implicit creation, generations, races."""

from __future__ import annotations

import uuid as uuid_module

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects import aggregate as aggregate_obj
from tests.fixtures import seed
from tests.fixtures.threads import run_at_once


def _aggregate_rows(database) -> list[str]:
    return database.read(lambda connection: sorted(connection.execute(
        sa.select(tables.placement_aggregates.c.uuid)).scalars()))


def test_replacing_creates_aggregates_and_never_deletes_them(database):
    provider = seed.add_provider(database)
    first, second, third = (str(uuid_module.uuid4()) for _ in range(3))
    result = aggregate_obj.set_provider_aggregates(database, provider, [second, first], None)
    assert result.uuids == [second, first]
    assert result.generation == 0
    aggregate_obj.set_provider_aggregates(database, provider, [third], None)
    assert aggregate_obj.get_provider_aggregates(database, provider).uuids == [third]
    assert _aggregate_rows(database) == sorted([first, second, third])
    assert seed.provider_generation(database, provider) == 0


def test_uuids_are_stored_verbatim(database):
    provider = seed.add_provider(database)
    upper = str(uuid_module.uuid4()).upper()
    bare = uuid_module.uuid4().hex
    aggregate_obj.set_provider_aggregates(database, provider, [upper, bare], None)
    assert aggregate_obj.get_provider_aggregates(database, provider).uuids == sorted(
        [upper, bare])


def test_a_generation_is_checked_and_always_bumped(database):
    provider = seed.add_provider(database)
    aggregate = str(uuid_module.uuid4())
    assert aggregate_obj.set_provider_aggregates(
        database, provider, [aggregate], 0).generation == 1
    assert aggregate_obj.set_provider_aggregates(
        database, provider, [aggregate], 1).generation == 2
    with pytest.raises(errors.ConcurrentUpdate):
        aggregate_obj.set_provider_aggregates(database, provider, [], 1)
    assert aggregate_obj.get_provider_aggregates(database, provider) == (
        aggregate_obj.ProviderAggregates([aggregate], 2))


def test_aggregates_are_per_provider(database):
    one, two = seed.add_provider(database), seed.add_provider(database)
    shared, own = str(uuid_module.uuid4()), str(uuid_module.uuid4())
    aggregate_obj.set_provider_aggregates(database, one, [shared, own], None)
    aggregate_obj.set_provider_aggregates(database, two, [shared], None)
    aggregate_obj.set_provider_aggregates(database, one, [], None)
    assert aggregate_obj.get_provider_aggregates(database, one).uuids == []
    assert aggregate_obj.get_provider_aggregates(database, two).uuids == [shared]


def test_unknown_provider_is_a_404(database):
    missing = str(uuid_module.uuid4())
    with pytest.raises(errors.NotFound):
        aggregate_obj.get_provider_aggregates(database, missing)
    with pytest.raises(errors.NotFound):
        aggregate_obj.set_provider_aggregates(database, missing, [], None)


def test_concurrent_writers_introduce_one_shared_aggregate_once(database):
    count = 6
    providers = [seed.add_provider(database) for _ in range(count)]
    shared = str(uuid_module.uuid4())
    results = run_at_once(count, lambda index: aggregate_obj.set_provider_aggregates(
        database, providers[index], [shared, str(uuid_module.uuid4())], None))
    assert all(isinstance(result, aggregate_obj.ProviderAggregates) for result in results), (
        results)
    assert _aggregate_rows(database).count(shared) == 1
    for provider in providers:
        assert shared in aggregate_obj.get_provider_aggregates(database, provider).uuids


def test_concurrent_writers_of_one_generation_one_wins(database):
    count = 5
    provider = seed.add_provider(database)
    sets = [[str(uuid_module.uuid4())] for _ in range(count)]
    results = run_at_once(count, lambda index: aggregate_obj.set_provider_aggregates(
        database, provider, sets[index], 0))
    winners = [result for result in results
               if isinstance(result, aggregate_obj.ProviderAggregates)]
    assert len(winners) == 1, results
    assert all(isinstance(result, errors.ConcurrentUpdate)
               for result in results if result not in winners)
    assert aggregate_obj.get_provider_aggregates(database, provider) == (
        aggregate_obj.ProviderAggregates(winners[0].uuids, 1))


def test_concurrent_writers_without_generation_leave_one_whole_set(database):
    count = 5
    provider = seed.add_provider(database)
    sets = [sorted(str(uuid_module.uuid4()) for _ in range(3)) for _ in range(count)]
    results = run_at_once(count, lambda index: aggregate_obj.set_provider_aggregates(
        database, provider, sets[index], None))
    assert all(isinstance(result, aggregate_obj.ProviderAggregates) for result in results), (
        results)
    assert aggregate_obj.get_provider_aggregates(database, provider).uuids in sets
