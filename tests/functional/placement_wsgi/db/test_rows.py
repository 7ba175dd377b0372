"""placement_wsgi.db.rows.connection_rows on every engine: the same rows as a
plain SQLAlchemy read, whichever way they travel (MariaDB packs them into one
text and must fall back to plain rows whenever that text cannot be trusted)."""

from __future__ import annotations

import decimal

import pytest
import sqlalchemy as sa

from placement_wsgi.db import rows, tables
from placement_wsgi.db.database import Database

_rp = tables.resource_providers
_inv = tables.inventories
_alloc = tables.allocations
_traits = tables.traits
_rpt = tables.resource_provider_traits

#: provider names that a packed text must not mistake for its own syntax
AWKWARD_NAMES = ['quote " inside', "back\\slash", "comma, and ] bracket", "tab\there", "",
                 "null", "ünï"]
RATIOS = [1.0, 16.0, 0.1, 1.5, 3.3333333, 1e-7, 123456789.0]


def _seed(database: Database, names: list[str | None]) -> None:
    def body(connection: sa.Connection) -> None:
        providers = []
        for index, name in enumerate(names, start=1):
            parent = 1 if index > 1 else None
            providers.append({"id": index, "uuid": f"00000000-0000-0000-0000-{index:012d}",
                              "name": name, "generation": 1, "root_provider_id": 1,
                              "parent_provider_id": parent})
        connection.execute(_rp.insert(), providers)
        connection.execute(_inv.insert(), [
            {"resource_provider_id": index, "resource_class_id": rc, "total": 10 * index,
             "reserved": rc, "min_unit": 1, "max_unit": 10 * index, "step_size": 1,
             "allocation_ratio": RATIOS[(index + rc) % len(RATIOS)]}
            for index in range(1, len(names) + 1) for rc in (0, 1)])
        connection.execute(_alloc.insert(), [
            {"resource_provider_id": 1, "consumer_id": f"c{n}", "resource_class_id": 0,
             "used": n} for n in (1, 2, 3)])
        connection.execute(_rpt.insert(), [
            {"resource_provider_id": index, "trait_id": trait}
            for index in range(1, len(names) + 1) for trait in (1, 2)])

    database.write(body)


def _queries() -> dict[str, sa.Select]:
    return {
        "ints and floats": sa.select(_inv.c.resource_provider_id, _inv.c.resource_class_id,
                                     _inv.c.total, _inv.c.allocation_ratio),
        "nullable and strings": sa.select(
            _rp.c.id, _rp.c.uuid, _rp.c.name, _rp.c.parent_provider_id,
            sa.func.coalesce(_rp.c.root_provider_id, _rp.c.id)),
        "semi-join": sa.select(_rp.c.id, _rp.c.uuid).where(sa.exists().where(
            _inv.c.resource_provider_id == _rp.c.id, _inv.c.resource_class_id == 1)),
        "join": sa.select(_rpt.c.resource_provider_id, _traits.c.name).join(
            _traits, _traits.c.id == _rpt.c.trait_id),
        "grouped sum": sa.select(_alloc.c.resource_provider_id, _alloc.c.resource_class_id,
                                 sa.func.sum(_alloc.c.used))
        .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id),
        "distinct": sa.select(_inv.c.resource_class_id).distinct(),
        "empty": sa.select(_rp.c.id, _rp.c.name).where(_rp.c.id < 0),
    }


def _normalised(values: list[tuple]) -> list[tuple]:
    """Rows in a comparable order; sums as int (MySQL drivers give Decimal)."""
    return sorted((tuple(int(value) if isinstance(value, decimal.Decimal) else value
                         for value in row) for row in values), key=repr)


def _reference(connection: sa.Connection, query: sa.Select) -> list[tuple]:
    return _normalised([tuple(row) for row in connection.execute(query)])


@pytest.mark.parametrize("name", sorted(_queries()))
def test_rows_match_a_plain_read(database: Database, name: str) -> None:
    _seed(database, ["root", "child", "other"])
    query = _queries()[name]

    def body(connection: sa.Connection) -> None:
        got = rows.connection_rows(connection, query)
        assert _normalised(got) == _reference(connection, query)
        assert all(type(row) is tuple for row in got)

    database.read(body)


def test_floats_keep_their_type_and_value(database: Database) -> None:
    _seed(database, [f"rp{index}" for index in range(len(RATIOS))])
    query = sa.select(_inv.c.allocation_ratio)

    def body(connection: sa.Connection) -> None:
        got = rows.connection_rows(connection, query)
        assert {type(value) for value, in got} == {float}
        assert _normalised(got) == _reference(connection, query)

    database.read(body)


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_strings_that_look_like_syntax_come_back_intact(database: Database, name: str) -> None:
    _seed(database, ["root", name, None])
    query = sa.select(_rp.c.id, _rp.c.name)

    def body(connection: sa.Connection) -> None:
        assert _normalised(rows.connection_rows(connection, query)) == sorted(
            [(1, "root"), (2, name), (3, None)], key=repr)

    database.read(body)


def test_ordered_queries_keep_their_order(database: Database) -> None:
    _seed(database, ["a", "b", "c", "d"])
    query = sa.select(_rp.c.id).order_by(_rp.c.id.desc())

    def body(connection: sa.Connection) -> None:
        assert list(rows.connection_rows(connection, query)) == [(4,), (3,), (2,), (1,)]

    database.read(body)


def _require_mariadb(database: Database) -> None:
    with database.engine.connect() as connection:
        if not getattr(connection.dialect, "is_mariadb", False):
            pytest.skip("packing is MariaDB's")


def test_mariadb_packs_rows_into_one_text(database: Database) -> None:
    _require_mariadb(database)
    _seed(database, ["root", "child", None])
    query = _queries()["nullable and strings"]

    def body(connection: sa.Connection) -> None:
        packed = rows._packed_rows(connection, query)
        assert packed is not None
        assert _normalised(packed) == _reference(connection, query)

    database.read(body)


@pytest.mark.parametrize("name", ['quote " inside', "back\\slash"])
def test_mariadb_does_not_trust_a_text_with_quotes_or_escapes(
        database: Database, name: str) -> None:
    _require_mariadb(database)
    _seed(database, ["root", name])

    def body(connection: sa.Connection) -> None:
        assert rows._packed_rows(connection, sa.select(_rp.c.id, _rp.c.name)) is None

    database.read(body)


def test_mariadb_falls_back_when_the_text_is_cut(database: Database,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _require_mariadb(database)
    _seed(database, [f"rp{index}" for index in range(20)])
    query = _queries()["ints and floats"]
    monkeypatch.setattr(rows, "GROUP_CONCAT_MAX_LEN", 50)

    def body(connection: sa.Connection) -> None:
        assert rows._packed_rows(connection, query) is None
        assert _normalised(rows.connection_rows(connection, query)) == _reference(
            connection, query)

    database.read(body)


def test_only_ungrouped_distinctless_column_reads_are_aggregated_in_place() -> None:
    queries = _queries()
    assert {name for name, query in queries.items() if rows._row_wise(query)} == {
        "ints and floats", "nullable and strings", "semi-join", "join", "empty"}
    assert not rows._row_wise(queries["join"].distinct())


def test_statement_fills_its_id_lists_per_call(database: Database) -> None:
    _seed(database, ["root", "child", "other", "fourth"])
    built = []

    def build(providers: rows.IdList, classes: rows.IdList) -> sa.Select:
        built.append((providers, classes))
        return sa.select(_inv.c.resource_provider_id, _inv.c.resource_class_id,
                         _inv.c.allocation_ratio).where(
            rows.in_ids(_inv.c.resource_provider_id, providers),
            sa.not_(rows.in_ids(_inv.c.resource_class_id, classes)))

    statement = rows.Statement(build)

    def expected(connection: sa.Connection, providers: set[int], classes: set[int]) -> list:
        return _reference(connection, sa.select(
            _inv.c.resource_provider_id, _inv.c.resource_class_id, _inv.c.allocation_ratio)
            .where(_inv.c.resource_provider_id.in_(providers),
                   _inv.c.resource_class_id.not_in(classes)))

    def body(connection: sa.Connection) -> None:
        for providers, classes in [({1, 3}, {1}), ({2, 3, 4}, {0}), ({4}, {0, 1})]:
            got = statement.rows(connection, providers, classes)
            assert all(type(row) is tuple for row in got)
            assert _normalised(got) == expected(connection, providers, classes)
        # an empty list: IN matches nothing, NOT IN everything
        assert list(statement.rows(connection, [], {0})) == []
        assert _normalised(statement.rows(connection, {2}, [])) == expected(
            connection, {2}, {-1})
        assert len(_normalised(statement.rows(connection, {2}, []))) == 2

    database.read(body)
    database.read(body)
    assert len(built) == 1  # built and compiled once, whatever the lists


def test_statement_keeps_bound_constants(database: Database) -> None:
    _seed(database, ["a", "b", "c"])
    statement = rows.Statement(lambda: sa.select(_rp.c.id).where(
        _rp.c.parent_provider_id.is_not(None)).order_by(_rp.c.id).limit(1))

    def body(connection: sa.Connection) -> None:
        assert list(statement.rows(connection)) == [(2,)]

    database.read(body)
