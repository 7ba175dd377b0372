"""Schema creation and upgrade (placement_wsgi.db.migration) on every engine.

The schema must be the reference Placement schema at alembic head
``a082b8bb98d0``, reachable from an empty
database and from a database a reference service left at an older revision.
"""

from __future__ import annotations

import threading

import os_resource_classes
import os_traits
import pytest
import sqlalchemy as sa

from placement_wsgi.db import migration, tables
from placement_wsgi.db.database import Database
from tests.fixtures.empty_databases import (
    empty_db_url,  # noqa: F401 (fixture)
    upgrade_to,
)

HEAD = "a082b8bb98d0"

TIMESTAMPS = {"created_at", "updated_at"}
COLUMNS = {
    "resource_classes": {"id", "name"},
    "resource_providers": {"id", "uuid", "name", "generation", "root_provider_id",
                           "parent_provider_id"},
    "inventories": {"id", "resource_provider_id", "resource_class_id", "total", "reserved",
                    "min_unit", "max_unit", "step_size", "allocation_ratio"},
    "allocations": {"id", "resource_provider_id", "consumer_id", "resource_class_id", "used"},
    "placement_aggregates": {"id", "uuid"},
    "resource_provider_aggregates": {"resource_provider_id", "aggregate_id"},
    "traits": {"id", "name"},
    "resource_provider_traits": {"trait_id", "resource_provider_id"},
    "projects": {"id", "external_id"},
    "users": {"id", "external_id"},
    "consumers": {"id", "uuid", "project_id", "user_id", "generation", "consumer_type_id"},
    "consumer_types": {"id", "name"},
}
PRIMARY_KEYS = {
    "resource_provider_aggregates": {"resource_provider_id", "aggregate_id"},
    "resource_provider_traits": {"trait_id", "resource_provider_id"},
}
UNIQUE = {
    "resource_classes": [{"name"}],
    "resource_providers": [{"uuid"}, {"name"}],
    "inventories": [{"resource_provider_id", "resource_class_id"}],
    "placement_aggregates": [{"uuid"}],
    "traits": [{"name"}],
    "projects": [{"external_id"}],
    "users": [{"external_id"}],
    "consumers": [{"uuid"}],
    "consumer_types": [{"name"}],
}
INDEXES_AT_HEAD = {
    "allocations": {"allocations_resource_provider_class_used_idx",
                    "allocations_resource_class_id_idx", "allocations_consumer_id_idx"},
    "inventories": {"inventories_resource_class_id_idx"},
    "resource_providers": {"resource_providers_parent_provider_id_idx",
                           "resource_providers_root_provider_id_idx"},
    "resource_provider_aggregates": {"resource_provider_aggregates_aggregate_id_idx"},
    "resource_provider_traits": {"resource_provider_traits_resource_provider_trait_idx"},
    "consumers": {"consumers_project_id_user_id_uuid_idx", "consumers_project_id_uuid_idx",
                  "consumers_consumer_type_id_idx"},
}
#: Indexes of revision 422ece571366 that the head revision drops.
REDUNDANT_INDEXES = {
    "inventories": {"inventories_resource_provider_id_idx",
                    "inventories_resource_provider_resource_class_idx"},
    "placement_aggregates": {"ix_placement_aggregates_uuid"},
    "resource_providers": {"resource_providers_name_idx", "resource_providers_uuid_idx"},
}


def index_names(inspector: sa.Inspector, table: str) -> set[str]:
    return {index["name"] for index in inspector.get_indexes(table)}


def unique_column_sets(inspector: sa.Inspector, table: str) -> list[set[str]]:
    sets = [set(unique["column_names"]) for unique in inspector.get_unique_constraints(table)]
    sets += [set(index["column_names"]) for index in inspector.get_indexes(table)
             if index.get("unique")]
    return sets


def counts(database: Database) -> tuple[int, int, int]:
    with database.engine.connect() as connection:
        return (
            connection.execute(sa.select(sa.func.count()).select_from(tables.traits)).scalar(),
            connection.execute(
                sa.select(sa.func.count()).select_from(tables.resource_classes)).scalar(),
            connection.execute(sa.text("SELECT COUNT(*) FROM alembic_version")).scalar(),
        )


@pytest.fixture
def empty_database(empty_db_url: str):  # noqa: F811
    database = Database(empty_db_url)
    yield database
    database.dispose()


def test_head_is_the_reference_head() -> None:
    assert migration.head_revision() == HEAD


def test_empty_database_has_no_revision(empty_database: Database) -> None:
    assert migration.current_revision(empty_database) is None


def test_fresh_database_ends_at_head_with_reference_schema(empty_database: Database) -> None:
    assert migration.upgrade(empty_database) == HEAD
    assert migration.current_revision(empty_database) == HEAD
    inspector = sa.inspect(empty_database.engine)
    assert set(inspector.get_table_names()) == set(COLUMNS) | {"alembic_version"}
    for table, columns in COLUMNS.items():
        found = {column["name"] for column in inspector.get_columns(table)}
        assert found == columns | TIMESTAMPS, table
        primary_key = set(inspector.get_pk_constraint(table)["constrained_columns"])
        assert primary_key == PRIMARY_KEYS.get(table, {"id"}), table
    for table, expected in UNIQUE.items():
        found = unique_column_sets(inspector, table)
        for columns in expected:
            assert columns in found, (table, columns)
    for table, names in INDEXES_AT_HEAD.items():
        assert names <= index_names(inspector, table), table
    for table, names in REDUNDANT_INDEXES.items():
        assert not names & index_names(inspector, table), table


def test_sync_loads_standard_names_once_with_their_ids(empty_database: Database) -> None:
    migration.upgrade(empty_database)
    with empty_database.engine.connect() as connection:
        classes = connection.execute(
            sa.select(tables.resource_classes.c.id, tables.resource_classes.c.name)
            .order_by(tables.resource_classes.c.id)).all()
        traits = connection.execute(sa.select(tables.traits.c.name)).scalars().all()
    assert [tuple(row) for row in classes] == list(enumerate(os_resource_classes.STANDARDS))
    assert classes[0] == (0, "VCPU") and classes[10] == (10, "VGPU")
    assert sorted(traits) == sorted(os_traits.get_traits())
    assert len(traits) == len(set(traits)) == 377
    assert {"MISC_SHARES_VIA_AGGREGATE", "COMPUTE_STATUS_DISABLED"} <= set(traits)


def test_sync_twice_is_a_no_op(empty_database: Database) -> None:
    migration.upgrade(empty_database)
    before = counts(empty_database)
    inspector = sa.inspect(empty_database.engine)
    indexes_before = {table: index_names(inspector, table) for table in COLUMNS}
    assert migration.upgrade(empty_database) == HEAD
    assert counts(empty_database) == before
    assert before[2] == 1
    inspector = sa.inspect(empty_database.engine)
    assert {table: index_names(inspector, table) for table in COLUMNS} == indexes_before


def test_sync_restores_missing_standard_names_but_keeps_custom_ones(
        empty_database: Database) -> None:
    migration.upgrade(empty_database)
    with empty_database.engine.begin() as connection:
        connection.execute(tables.traits.delete().where(tables.traits.c.name == "HW_CPU_X86_AVX"))
        connection.execute(tables.traits.insert().values(name="CUSTOM_KEEP"))
    migration.upgrade(empty_database)
    with empty_database.engine.connect() as connection:
        names = set(connection.execute(sa.select(tables.traits.c.name)).scalars())
    assert {"HW_CPU_X86_AVX", "CUSTOM_KEEP"} <= names
    assert len(names) == len(os_traits.get_traits()) + 1


def test_database_at_older_reference_revision_upgrades_and_keeps_data(
        empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, "422ece571366")
    database = Database(empty_db_url)
    try:
        assert migration.current_revision(database) == "422ece571366"
        inspector = sa.inspect(database.engine)
        for table, names in REDUNDANT_INDEXES.items():
            assert names <= index_names(inspector, table), table
        with database.engine.begin() as connection:
            connection.execute(tables.traits.insert().values(name="CUSTOM_OLD"))
            connection.execute(tables.resource_providers.insert().values(
                id=1, uuid="4e8e5957-649f-477b-9e5b-f1f75b21c03c", name="old", generation=3,
                root_provider_id=None))
            connection.execute(tables.resource_providers.update().values(root_provider_id=1))
        assert migration.upgrade(database) == HEAD
        inspector = sa.inspect(database.engine)
        for table, names in REDUNDANT_INDEXES.items():
            assert not names & index_names(inspector, table), table
        with database.engine.connect() as connection:
            traits = set(connection.execute(sa.select(tables.traits.c.name)).scalars())
            provider = connection.execute(sa.select(
                tables.resource_providers.c.name, tables.resource_providers.c.generation)).one()
        assert "CUSTOM_OLD" in traits and "HW_CPU_X86_AVX" in traits
        assert tuple(provider) == ("old", 3)
    finally:
        database.dispose()


def test_initial_revision_gains_consumer_types(empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, "b4ed3a175331")
    database = Database(empty_db_url)
    try:
        inspector = sa.inspect(database.engine)
        assert "consumer_types" not in inspector.get_table_names()
        migration.upgrade(database)
        inspector = sa.inspect(database.engine)
        assert "consumer_types" in inspector.get_table_names()
        assert "consumer_type_id" in {c["name"] for c in inspector.get_columns("consumers")}
    finally:
        database.dispose()


def test_upgrade_refuses_providers_without_root(empty_db_url: str) -> None:  # noqa: F811
    upgrade_to(empty_db_url, "b4ed3a175331")
    database = Database(empty_db_url)
    try:
        with database.engine.begin() as connection:
            connection.execute(sa.text(
                "INSERT INTO resource_providers (id, uuid, name, generation) "
                "VALUES (1, '7d3a4f4e-56c5-4a29-9d4b-2b8f3b1e0a51', 'orphan', 0)"))
        with pytest.raises(RuntimeError, match="root_provider_id"):
            migration.upgrade(database)
        assert migration.current_revision(database) == "b4ed3a175331"
    finally:
        database.dispose()


def test_concurrent_upgrades_on_one_fresh_database_all_succeed(
        empty_db_url: str) -> None:  # noqa: F811
    """Several processes (here: threads with their own engines) syncing at once."""
    workers = 4
    barrier = threading.Barrier(workers)
    results: list[str] = []
    failures: list[BaseException] = []

    def run() -> None:
        database = Database(empty_db_url)
        try:
            barrier.wait(timeout=30)
            results.append(migration.upgrade(database))
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)
        finally:
            database.dispose()

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert results == [HEAD] * workers
    database = Database(empty_db_url)
    try:
        assert counts(database) == (
            len(os_traits.get_traits()), len(os_resource_classes.STANDARDS), 1)
    finally:
        database.dispose()
