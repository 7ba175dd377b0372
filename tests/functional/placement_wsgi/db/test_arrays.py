"""one_of on every engine: the rows of the values given, one parameter on PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.arrays import array_values, one_of, uses_arrays
from placement_wsgi.db.inserts import insert_rows

_traits = tables.traits


def _seed(database, count: int) -> dict[str, int]:
    """``count`` custom traits; name -> id."""
    now = tables.utcnow()
    database.write(insert_rows, _traits,
                   [{"name": f"CUSTOM_ONE_OF_{n}", "created_at": now} for n in range(count)])
    return dict(database.read(lambda connection: connection.execute(
        sa.select(_traits.c.name, _traits.c.id)
        .where(_traits.c.name.like("CUSTOM_ONE_OF_%"))).all()))


def _statements(database) -> list[tuple[str, object]]:
    """The SELECTs sent from now on (text and parameters; a list, filled)."""
    seen: list[tuple[str, object]] = []

    def keep(conn, cursor, statement, parameters, *rest):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    sa.event.listen(database.engine, "before_cursor_execute", keep)
    return seen


def _names_with(database, column: str, values) -> set[str]:
    return set(database.read(lambda connection: connection.execute(
        sa.select(_traits.c.name).where(one_of(connection, _traits.c[column], values)))
        .scalars().all()))


def test_the_rows_of_the_ids_or_names_given_and_none_for_none(database):
    ids = _seed(database, 300)
    wanted = sorted(ids)[::7]  # 43 of them
    assert _names_with(database, "id", [ids[name] for name in wanted]) == set(wanted)
    assert _names_with(database, "name", wanted) == set(wanted)
    assert _names_with(database, "name", sorted(ids)) == set(ids)
    assert _names_with(database, "id", []) == set()
    assert _names_with(database, "name", ["CUSTOM_NOT_THERE"]) == set()


def test_a_value_longer_than_the_column_matches_nothing(database):
    """Not even the row holding its first 255 characters (a cast to the column's
    VARCHAR(255) would cut it to that)."""
    stored = "CUSTOM_" + "A" * 248
    database.write(insert_rows, _traits, [{"name": stored, "created_at": tables.utcnow()}])
    assert _names_with(database, "name", [stored]) == {stored}
    assert _names_with(database, "name", [stored + "B"]) == set()


def test_a_select_of_values_stays_a_subquery(database):
    ids = _seed(database, 5)
    some = sa.select(_traits.c.id).where(_traits.c.name.in_(["CUSTOM_ONE_OF_1",
                                                              "CUSTOM_ONE_OF_3"]))
    assert _names_with(database, "id", some) == {"CUSTOM_ONE_OF_1", "CUSTOM_ONE_OF_3"}
    assert len(ids) == 5


def test_on_postgresql_the_values_are_one_parameter_whatever_their_number(database):
    """The text (and so psycopg's cached conversion) does not grow with the list;
    elsewhere the expanding IN has one parameter per value."""
    ids = _seed(database, 300)
    seen = _statements(database)
    for count in (3, 300):
        _names_with(database, "id", list(ids.values())[:count])
    (few, few_parameters), (many, many_parameters) = seen
    engine_arrays = database.read(uses_arrays)
    assert (few == many) is engine_arrays
    assert (len(many_parameters) == 1) is engine_arrays


def test_a_float_columns_values_are_all_floats():
    assert array_values(tables.inventories.c.allocation_ratio, [1, 1.5, None]) == [
        1.0, 1.5, None]
    assert array_values(tables.inventories.c.total, (n for n in (1, 2))) == [1, 2]
