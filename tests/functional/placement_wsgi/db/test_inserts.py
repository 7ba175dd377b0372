"""insert_rows on every engine: the rows as written, defaults required, one statement."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.inserts import insert_rows


def _count_statements(database) -> list[str]:
    """The INSERT statements sent from now on (a list, filled)."""
    seen: list[str] = []

    def count(conn, cursor, statement, *rest):
        if statement.lstrip().upper().startswith("INSERT"):
            seen.append(statement)

    sa.event.listen(database.engine, "before_cursor_execute", count)
    return seen


def test_the_rows_are_written_as_given_in_one_statement(database):
    now = tables.utcnow()
    rows = [{"name": f"CUSTOM_T{n}", "created_at": now} for n in range(1200)]
    seen = _count_statements(database)
    database.write(insert_rows, tables.traits, rows)
    assert len(seen) == 1
    written = database.read(lambda connection: connection.execute(
        sa.select(tables.traits.c.name, tables.traits.c.created_at)
        .where(tables.traits.c.name.like("CUSTOM_T%"))).all())
    assert sorted((row.name, row.created_at) for row in written) == sorted(
        (row["name"], now) for row in rows)


def test_no_rows_is_no_statement(database):
    seen = _count_statements(database)
    database.write(insert_rows, tables.traits, [])
    assert seen == []


def test_a_column_with_a_python_default_must_be_given(database):
    with pytest.raises(ValueError, match="created_at"):
        database.write(insert_rows, tables.traits, [{"name": "CUSTOM_X"}])


def test_a_duplicate_raises_integrity_error_and_writes_none_of_the_rows(database):
    now = tables.utcnow()
    rows = [{"name": "CUSTOM_A", "created_at": now}, {"name": "CUSTOM_A", "created_at": now}]
    with pytest.raises(sa.exc.IntegrityError):
        database.write(insert_rows, tables.traits, rows)
    assert not database.read(lambda connection: connection.execute(
        sa.select(tables.traits.c.id).where(tables.traits.c.name == "CUSTOM_A")).all())


def test_a_float_column_takes_ints_beside_floats(database):
    """JSON gives ``1`` and ``1.5`` alike; PostgreSQL's arrays need one type."""
    now = tables.utcnow()
    rows = [{"resource_provider_id": 1, "resource_class_id": rc, "total": 8, "reserved": 0,
             "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": ratio,
             "created_at": now} for rc, ratio in ((0, 1), (1, 1.5), (2, 16))]
    database.write(insert_rows, tables.inventories, rows)
    written = database.read(lambda connection: connection.execute(
        sa.select(tables.inventories.c.resource_class_id,
                  tables.inventories.c.allocation_ratio)).all())
    assert sorted((row.resource_class_id, row.allocation_ratio) for row in written) == [
        (0, 1.0), (1, 1.5), (2, 16.0)]


def test_values_shared_by_every_row_are_written_in_every_row(database):
    """On PostgreSQL such a column goes as one value beside the arrays: each row
    still gets it (a NULL too, and an int in a float column)."""
    now = tables.utcnow()
    rows = [{"uuid": f"00000000-0000-0000-0000-00000000000{n}", "name": f"rp{n}",
             "generation": 0, "parent_provider_id": None, "root_provider_id": None,
             "created_at": now} for n in range(3)]
    database.write(insert_rows, tables.resource_providers, rows)
    ratios = [{"resource_provider_id": 1, "resource_class_id": rc, "total": 8, "reserved": 0,
               "min_unit": 1, "max_unit": 8, "step_size": 1, "allocation_ratio": 2,
               "created_at": now} for rc in range(3)]
    database.write(insert_rows, tables.inventories, ratios)
    providers = tables.resource_providers
    written = database.read(lambda connection: connection.execute(
        sa.select(providers.c.name, providers.c.generation, providers.c.parent_provider_id,
                  providers.c.created_at)).all())
    assert sorted(tuple(row) for row in written) == [
        (f"rp{n}", 0, None, now) for n in range(3)]
    stored = database.read(lambda connection: connection.execute(
        sa.select(tables.inventories.c.resource_class_id, tables.inventories.c.allocation_ratio,
                  tables.inventories.c.created_at)).all())
    assert sorted(tuple(row) for row in stored) == [(rc, 2.0, now) for rc in range(3)]


def test_a_value_longer_than_its_column_is_refused_not_cut(database):
    """As a plain INSERT of it: no row, not its first 255 characters (a cast to the
    column's VARCHAR(255) would cut it silently on PostgreSQL)."""
    now = tables.utcnow()
    long_name = "CUSTOM_" + "L" * 300
    rows = [{"name": long_name, "created_at": now}, {"name": "CUSTOM_SHORT", "created_at": now}]
    try:
        database.write(insert_rows, tables.traits, rows)
    except sa.exc.DBAPIError:
        pass  # PostgreSQL and MariaDB (strict mode) refuse it
    names = database.read(lambda connection: connection.execute(
        sa.select(tables.traits.c.name).where(tables.traits.c.name.like("CUSTOM_%"))
    ).scalars().all())
    assert long_name[:255] not in names
