"""Inserting new providers on every engine: the rows, and how few statements."""

from __future__ import annotations

import uuid as uuid_module

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects.provider_insert import NewProvider, insert_providers

_providers = tables.resource_providers


def _uuid(name: str) -> str:
    return str(uuid_module.uuid5(uuid_module.NAMESPACE_DNS, name))


def _rows(database) -> dict[str, tuple]:
    """uuid -> (name, parent uuid, root uuid, generation, has created_at)."""
    parent, root = _providers.alias("parent"), _providers.alias("root")
    rows = database.read(lambda connection: connection.execute(
        sa.select(_providers.c.uuid, _providers.c.name, parent.c.uuid.label("parent"),
                  root.c.uuid.label("root"), _providers.c.generation,
                  _providers.c.created_at, _providers.c.updated_at)
        .outerjoin(parent, parent.c.id == _providers.c.parent_provider_id)
        .outerjoin(root, root.c.id == _providers.c.root_provider_id)).all())
    return {row.uuid: (row.name, row.parent, row.root, row.generation,
                       row.created_at is not None and row.updated_at is None) for row in rows}


@pytest.fixture
def statements(database):
    """The reads and writes the engine runs while the test body does (a list, filled;
    transaction control and session settings left out)."""
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            seen.append(statement)

    sa.event.listen(database.engine, "before_cursor_execute", count)
    yield seen
    sa.event.remove(database.engine, "before_cursor_execute", count)


def test_a_tree_with_children_and_grandchildren_is_inserted_whole(database, statements):
    root, kids, grand = _uuid("root"), [_uuid(f"kid{n}") for n in range(4)], _uuid("grand")
    new = [NewProvider("root", root), *(NewProvider(f"kid{n}", kid, root)
                                       for n, kid in enumerate(kids)),
           NewProvider("grand", grand, kids[0])]
    ids = database.write(insert_providers, new)
    assert sorted(ids) == sorted([root, *kids, grand])
    rows = _rows(database)
    assert rows[root] == ("root", None, root, 0, True)
    assert all(rows[kid] == (f"kid{n}", root, root, 0, True) for n, kid in enumerate(kids))
    assert rows[grand] == ("grand", kids[0], root, 0, True)
    ids_in_database = dict(database.read(lambda connection: connection.execute(
        sa.select(_providers.c.uuid, _providers.c.id)).all()))
    assert ids == ids_in_database
    inserts = [text for text in statements if text.lstrip().upper().startswith("INSERT")]
    # the root, its four children together, the grandchild
    assert len(inserts) == 3


def test_children_of_an_existing_parent_take_one_insert_and_one_query(database, statements):
    root = _uuid("root")
    database.write(insert_providers, [NewProvider("root", root)])
    statements.clear()
    kids = [NewProvider(f"kid{n}", _uuid(f"kid{n}"), root) for n in range(8)]
    database.write(insert_providers, kids)
    # parent lock, clash check, the insert, the ids
    assert len(statements) == 4, statements
    assert {row[2] for uuid, row in _rows(database).items() if uuid != root} == {root}


def test_a_child_clashing_with_another_of_the_same_insert_writes_nothing(database):
    root = _uuid("root")
    database.write(insert_providers, [NewProvider("root", root)])
    with pytest.raises(errors.DuplicateName):
        database.write(insert_providers, [NewProvider("same", _uuid("a"), root),
                                          NewProvider("same", _uuid("b"), root)])
    assert list(_rows(database)) == [root]
