"""Usage objects on every engine, from allocation rows written with SQL.

The consumer-type grouping is the query the reference service gets wrong
on PostgreSQL (GROUP BY), so these run on all enabled engines.
"""

from __future__ import annotations

import uuid as uuid_module

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects import usage as usage_obj
from placement_wsgi.objects.usage import UsageGroup
from tests.fixtures import seed


def _id_of(connection, table: sa.Table, column: str, value: str) -> int:
    """Id of the row whose ``column`` is ``value``, inserting it if missing."""
    found = connection.execute(
        sa.select(table.c.id).where(table.c[column] == value)).scalar()
    if found is not None:
        return found
    return connection.execute(table.insert().values({column: value})).inserted_primary_key[0]


def add_consumer(database, project: str, user: str, consumer_type: str | None = None) -> str:
    """A consumer row (with its project, user and type rows); returns its uuid."""
    uuid = str(uuid_module.uuid4())

    def body(connection):
        type_id = (_id_of(connection, tables.consumer_types, "name", consumer_type)
                   if consumer_type else None)
        connection.execute(tables.consumers.insert().values(
            uuid=uuid, generation=1, consumer_type_id=type_id,
            project_id=_id_of(connection, tables.projects, "external_id", project),
            user_id=_id_of(connection, tables.users, "external_id", user)))

    database.write(body)
    return uuid


def allocate(database, consumer: str, provider: str, **amounts: int) -> None:
    """Allocation rows of ``consumer`` on ``provider``: class name -> used."""

    def body(connection):
        provider_id = connection.execute(sa.select(tables.resource_providers.c.id).where(
            tables.resource_providers.c.uuid == provider)).scalar_one()
        class_ids = dict(connection.execute(sa.select(
            tables.resource_classes.c.name, tables.resource_classes.c.id).where(
            tables.resource_classes.c.name.in_(list(amounts)))).all())
        connection.execute(tables.allocations.insert(), [
            {"resource_provider_id": provider_id, "consumer_id": consumer,
             "resource_class_id": class_ids[name], "used": used}
            for name, used in amounts.items()])

    database.write(body)


@pytest.fixture
def deployment(database):
    """Two providers and allocations of several consumers of projects p1 and p2.

    p1/u1: INSTANCE a (VCPU 2, DISK_GB 10), INSTANCE b (VCPU 1),
           MIGRATION m (VCPU 4 on the other provider)
    p1/u2: untyped x (MEMORY_MB 512), INSTANCE c (DISK_GB 5)
    p2/u1: INSTANCE z (VCPU 8)
    """
    one, two = seed.add_provider(database), seed.add_provider(database)
    for provider in (one, two):
        for name, total in (("VCPU", 64), ("MEMORY_MB", 4096), ("DISK_GB", 100)):
            seed.add_inventory(database, provider, name, total)
    consumer = {
        "a": add_consumer(database, "p1", "u1", "INSTANCE"),
        "b": add_consumer(database, "p1", "u1", "INSTANCE"),
        "m": add_consumer(database, "p1", "u1", "MIGRATION"),
        "x": add_consumer(database, "p1", "u2"),
        "c": add_consumer(database, "p1", "u2", "INSTANCE"),
        "z": add_consumer(database, "p2", "u1", "INSTANCE"),
    }
    allocate(database, consumer["a"], one, VCPU=2, DISK_GB=10)
    allocate(database, consumer["b"], one, VCPU=1)
    allocate(database, consumer["m"], two, VCPU=4)
    allocate(database, consumer["x"], one, MEMORY_MB=512)
    allocate(database, consumer["c"], two, DISK_GB=5)
    allocate(database, consumer["z"], two, VCPU=8)
    return one, two


def test_provider_usages_list_every_inventory_class(database, deployment):
    one, two = deployment
    result = usage_obj.get_provider_usages(database, one)
    assert result == usage_obj.ProviderUsages(
        0, {"VCPU": 3, "MEMORY_MB": 512, "DISK_GB": 10})
    assert usage_obj.get_provider_usages(database, two).usages == {
        "VCPU": 12, "MEMORY_MB": 0, "DISK_GB": 5}


def test_provider_without_inventory_has_no_usages(database):
    provider = seed.add_provider(database)
    assert usage_obj.get_provider_usages(database, provider).usages == {}


def test_missing_provider_is_404_with_the_given_message(database):
    with pytest.raises(errors.NotFound, match="^nope$"):
        usage_obj.get_provider_usages(database, str(uuid_module.uuid4()), "nope")


def test_total_usages_of_a_project_and_of_one_user(database, deployment):
    assert usage_obj.get_total_usages(database, "p1") == {
        "VCPU": 7, "DISK_GB": 15, "MEMORY_MB": 512}
    assert usage_obj.get_total_usages(database, "p1", "u2") == {
        "DISK_GB": 5, "MEMORY_MB": 512}
    assert usage_obj.get_total_usages(database, "p2") == {"VCPU": 8}
    assert usage_obj.get_total_usages(database, "p2", "u2") == {}
    assert usage_obj.get_total_usages(database, "nobody") == {}


def test_usages_grouped_by_consumer_type(database, deployment):
    assert usage_obj.get_usages_by_consumer_type(database, "p1") == {
        # consumer_count counts consumers of the group over all classes: b
        # has no disk and c no VCPU, yet all three are counted.
        "INSTANCE": UsageGroup({"VCPU": 3, "DISK_GB": 15}, 3),
        "MIGRATION": UsageGroup({"VCPU": 4}, 1),
        "unknown": UsageGroup({"MEMORY_MB": 512}, 1),
    }


def test_grouped_usages_of_one_user(database, deployment):
    assert usage_obj.get_usages_by_consumer_type(database, "p1", "u2") == {
        "INSTANCE": UsageGroup({"DISK_GB": 5}, 1),
        "unknown": UsageGroup({"MEMORY_MB": 512}, 1),
    }


def test_all_puts_every_consumer_in_one_group(database, deployment):
    assert usage_obj.get_usages_by_consumer_type(database, "p1", consumer_type="all") == {
        "all": UsageGroup({"VCPU": 7, "DISK_GB": 15, "MEMORY_MB": 512}, 5)}


def test_unknown_selects_consumers_without_a_type(database, deployment):
    assert usage_obj.get_usages_by_consumer_type(
        database, "p1", consumer_type="unknown") == {
        "unknown": UsageGroup({"MEMORY_MB": 512}, 1)}
    assert usage_obj.get_usages_by_consumer_type(
        database, "p2", consumer_type="unknown") == {}


def test_a_type_name_selects_its_consumers(database, deployment):
    assert usage_obj.get_usages_by_consumer_type(
        database, "p1", "u1", consumer_type="INSTANCE") == {
        "INSTANCE": UsageGroup({"VCPU": 3, "DISK_GB": 10}, 2)}
    # Upper-case ALL and UNKNOWN are ordinary type names, here unused.
    for name in ("ALL", "UNKNOWN", "allx"):
        assert usage_obj.get_usages_by_consumer_type(database, "p1", consumer_type=name) == {}


def test_no_allocations_means_no_groups(database):
    for consumer_type in (None, "all", "unknown", "INSTANCE"):
        assert usage_obj.get_usages_by_consumer_type(
            database, "p1", consumer_type=consumer_type) == {}


def test_allocations_without_a_consumer_record_are_not_counted(database, deployment):
    one, _two = deployment
    allocate(database, str(uuid_module.uuid4()), one, VCPU=50)
    assert usage_obj.get_total_usages(database, "p1")["VCPU"] == 7
    # ... although the provider's own usage counts every allocation row.
    assert usage_obj.get_provider_usages(database, one).usages["VCPU"] == 53
