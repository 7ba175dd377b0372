"""Many values as one bound parameter: column arrays on PostgreSQL.

psycopg converts a statement's ``%(name)s`` placeholders to PostgreSQL's
``$n`` with a regular expression, and caches the conversion only for
statements of at most 50 parameters and 4,096 characters. An expanding
``IN`` of a few hundred ids (the migration's write transaction, ten nodes
at a time, names 160 consumers and hundreds of providers per statement) is
past both limits, so every execution was parsed again: about 1-2 CPU-s per
500 nodes, and SQLAlchemy rendered the hundreds of placeholders too. Bound
as ONE array (``column = ANY(%(p)s::INTEGER[])``) the text is short and the
same whatever the number of values: compiled once by SQLAlchemy, converted
once by psycopg, and PostgreSQL uses the column's index for it as for
``IN``.

Other engines keep the expanding ``IN``: PyMySQL formats its parameters in
Python whatever their form and MariaDB has no array type; SQLite runs
in-process.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection


def uses_arrays(connection: Connection) -> bool:
    """Whether ``connection``'s engine takes column arrays as parameters (PostgreSQL)."""
    return connection.dialect.name == "postgresql"


def array_values(column: sa.ColumnElement, values: Iterable[Any]) -> list[Any]:
    """``values`` as one array of ``column``'s type: a float column's ints (JSON's
    ``1`` beside ``1.5``) made floats, since psycopg refuses a list of mixed types."""
    if isinstance(column.type, sa.Float):
        return [None if value is None else float(value) for value in values]
    return list(values)


def element_type(column: sa.ColumnElement) -> sa.types.TypeEngine:
    """The type to cast ``column``'s values to: its own, a string's without its
    length. A cast to ``VARCHAR(n)`` silently cuts a longer value, which could
    then match a row the whole value does not, or be stored cut where an
    INSERT of the value itself is refused."""
    if isinstance(column.type, sa.String) and column.type.length:
        return sa.String()
    return column.type


def one_of(connection: Connection, column: sa.ColumnElement,
           values: Iterable[Any] | sa.Select) -> sa.ColumnElement:
    """``column`` is one of ``values``: the filter for "these ids" (or uuids,
    names) in a statement run on ``connection``.

    On PostgreSQL one array parameter (``= ANY``), elsewhere an expanding
    ``IN``; the same rows either way, none for no values. A SELECT of values
    stays a subquery (``IN (SELECT ...)``) on every engine.
    """
    if isinstance(values, sa.Select):
        return column.in_(values)
    if not uses_arrays(connection):
        return column.in_(list(values))
    array = sa.bindparam(None, array_values(column, values),
                         type_=postgresql.ARRAY(element_type(column)))
    return column == sa.any_(array)
