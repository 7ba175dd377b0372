"""Inserting many rows in one statement, on every driver.

An executemany looks like one statement, but psycopg sends each row as its
own statement (in one pipeline), which PostgreSQL then parses, plans and
runs one by one. The migration's in-process write inserts hundreds of
allocation, inventory, trait and provider rows per transaction; measured
on this machine's PostgreSQL, 480 rows cost 7 ms of client CPU and about
40 ms in all as an executemany, 2.2 ms and about 11 ms as one
``INSERT ... SELECT * FROM unnest(...)`` of one array per column (a
multi-row ``VALUES`` list costs more than the executemany: SQLAlchemy and
psycopg both handle every placeholder of every row).

So on PostgreSQL :func:`insert_rows` sends the rows as column arrays, one
statement whatever their number; elsewhere the executemany stays (PyMySQL
already rewrites it as a multi-row insert; SQLite runs it in-process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db.arrays import array_values, uses_arrays


def insert_rows(connection: Connection, table: sa.Table,
                rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``rows`` (each with the same keys) into ``table``, in the caller's
    transaction; nothing for none.

    Every column with a Python-side default (``created_at``) must be given:
    ValueError otherwise (an executemany would fill it, the arrays cannot). A
    unique violation raises ``IntegrityError``, as with an executemany.
    """
    if not rows:
        return
    names = list(rows[0])
    missing = [column.name for column in table.columns
               if column.default is not None and column.name not in names]
    if missing:
        raise ValueError(f"insert_rows into {table.name} needs {missing} given")
    if not uses_arrays(connection):
        connection.execute(table.insert(), list(rows))
        return
    dialect = connection.dialect
    quote = dialect.identifier_preparer.quote
    arrays = ", ".join(f"CAST(:c{index} AS {table.c[name].type.compile(dialect=dialect)}[])"
                       for index, name in enumerate(names))
    connection.execute(
        sa.text(f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) "
                f"SELECT * FROM unnest({arrays})"),
        {f"c{index}": array_values(table.c[name], [row[name] for row in rows])
         for index, name in enumerate(names)})

