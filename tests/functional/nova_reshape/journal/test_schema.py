"""The journal's tables beside Placement's: their own version, Placement untouched."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.journal import schema
from placement_wsgi.db import migration, preflight
from placement_wsgi.db.database import Database


def _tables(database: Database) -> set[str]:
    return set(sa.inspect(database.engine).get_table_names())


def test_created_at_head_with_a_version_table_of_its_own(database, db_url):
    revision = migration.current_revision(database)
    placement_tables = _tables(database)
    assert schema.ensure(database.engine) == schema.HEAD
    added = _tables(database) - placement_tables
    assert added == {schema.VERSION_TABLE, schema.runs.name, schema.nodes.name}
    assert all(name.startswith(schema.PREFIX) for name in added)
    assert migration.current_revision(database) == revision  # alembic_version untouched
    with database.engine.connect() as connection:
        assert schema.current_version(connection) == schema.HEAD
    assert schema.ensure(database.engine) == schema.HEAD  # a second time: nothing to do
    with database.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(
            schema.version)).scalar() == 1


def test_placement_still_checks_and_syncs_a_database_holding_a_journal(database, db_url):
    schema.ensure(database.engine)
    assert preflight.check(db_url, schema=preflight.Schema.HEAD) is None
    assert migration.upgrade(database) == migration.head_revision()
    with database.engine.connect() as connection:
        assert schema.current_version(connection) == schema.HEAD


def test_a_database_without_a_journal_gets_none_from_reading(database):
    with database.engine.connect() as connection:
        assert not schema.present(connection)
        assert schema.current_version(connection) is None
    assert not any(name.startswith(schema.PREFIX) for name in _tables(database))


def test_a_version_written_by_a_newer_tool_is_refused(database):
    schema.ensure(database.engine)
    with database.engine.begin() as connection:
        connection.execute(schema.version.update().values(version="99"))
    with pytest.raises(schema.JournalSchemaError, match="version 99, unknown to this tool"):
        schema.ensure(database.engine)


def test_runs_started_within_one_second_list_in_the_order_they_started(database):
    from nova_reshape.journal import store

    started = [store.start_run(database.engine, "migrate_compute_inventory", "x", {})
               for _ in range(6)]
    assert [run.id for run in store.list_runs(database.engine)] == started


def test_version_1_tables_are_brought_to_the_microsecond(database):
    """A journal made by the first version (whole seconds on MySQL) upgrades in place."""
    with database.engine.begin() as connection:
        schema.metadata.create_all(connection, tables=[schema.version], checkfirst=True)
        connection.execute(schema.version.insert().values(version="1"))
        schema.metadata.create_all(connection, tables=[schema.runs, schema.nodes])
        if connection.dialect.name in ("mysql", "mariadb"):
            connection.exec_driver_sql(
                f"ALTER TABLE {schema.runs.name} MODIFY started_at DATETIME NOT NULL")
    assert schema.ensure(database.engine) == schema.HEAD == "2"
    columns = {column["name"]: column["type"] for column in
               sa.inspect(database.engine).get_columns(schema.runs.name)}
    if database.engine.dialect.name in ("mysql", "mariadb"):
        assert columns["started_at"].fsp == 6
    test_runs_started_within_one_second_list_in_the_order_they_started(database)
