"""Allocation writes and reads on every engine (objects/allocation.py)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.objects.allocation import ConsumerAllocations
from tests.fixtures import seed

CONSUMER = "c0000000-0000-4000-8000-000000000001"


def write(database, *requests: ConsumerAllocations, set_type: bool = True) -> None:
    allocation_obj.write_allocations(
        database, list(requests), unknown_class_prefix="", set_consumer_type=set_type,
        incomplete_project="incomplete", incomplete_user="incomplete")


def test_a_consumer_s_allocations_are_written_read_and_deleted(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 8)
    write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {provider: {"VCPU": 2}},
                                        consumer_generation=None, consumer_type="INSTANCE"))
    view = allocation_obj.get_consumer_allocations(database, CONSUMER)
    assert view.allocations[provider]["resources"] == {"VCPU": 2}
    assert (view.project_id, view.user_id, view.generation, view.consumer_type) == (
        "p1", "u1", 1, "INSTANCE")
    by_provider = allocation_obj.get_provider_allocations(database, provider)
    assert by_provider.allocations == {CONSUMER: {"resources": {"VCPU": 2},
                                                  "consumer_generation": 1}}
    assert by_provider.generation == seed.provider_generation(database, provider) == 1
    allocation_obj.delete_consumer_allocations(database, CONSUMER)
    assert allocation_obj.get_consumer_allocations(database, CONSUMER).allocations == {}
    with pytest.raises(errors.NotFound, match=f"No allocations for consumer '{CONSUMER}'"):
        allocation_obj.delete_consumer_allocations(database, CONSUMER)


def test_capacity_and_stale_consumer_generations_are_refused(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 2)
    with pytest.raises(errors.Conflict, match="Unable to create allocation for 'VCPU' on "
                       f"resource provider '{provider}'"):
        write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {provider: {"VCPU": 3}},
                                            consumer_generation=None))
    write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {provider: {"VCPU": 1}},
                                        consumer_generation=None))
    with pytest.raises(errors.ConcurrentUpdate, match="expected 1 but got 0"):
        write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {provider: {"VCPU": 2}},
                                            consumer_generation=0))
    assert seed.usage(database, provider, "VCPU") == 1


def test_an_empty_write_releases_and_forgets_the_consumer(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 2)
    write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {provider: {"VCPU": 1}},
                                        consumer_generation=None))
    write(database, ConsumerAllocations(CONSUMER, "p1", "u1", {}, consumer_generation=1))
    assert seed.usage(database, provider, "VCPU") == 0
    assert allocation_obj.get_consumer_allocations(database, CONSUMER).generation is None


def test_a_consumer_s_times_are_read_only_for_a_last_modified(database):
    """The tree reads skip the allocations' times (a datetime per row); the view a
    GET /allocations answers with still carries the newest of them."""
    first, second = seed.add_provider(database), seed.add_provider(database)
    for provider in (first, second):
        seed.add_inventory(database, provider, "VCPU", 8)
    write(database, ConsumerAllocations(CONSUMER, "p1", "u1",
                                        {first: {"VCPU": 1}, second: {"VCPU": 2}},
                                        consumer_generation=None))
    newest = database.read(lambda connection: connection.execute(
        sa.select(sa.func.max(tables.allocations.c.created_at)).where(
            tables.allocations.c.consumer_id == CONSUMER)).scalar_one())
    plain, timed = database.read(lambda connection: (
        allocation_obj.consumer_views(connection, [CONSUMER])[CONSUMER],
        allocation_obj.consumer_views(connection, [CONSUMER], last_modified=True)[CONSUMER]))
    assert newest is not None
    assert (plain.last_modified, timed.last_modified) == (None, newest)
    assert plain.allocations == timed.allocations == {
        first: {"generation": 1, "resources": {"VCPU": 1}},
        second: {"generation": 1, "resources": {"VCPU": 2}}}
    assert allocation_obj.get_consumer_allocations(database, CONSUMER).last_modified == newest
