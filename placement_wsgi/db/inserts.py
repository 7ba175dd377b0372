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
statement whatever their number (a column with the same value in every row
as that one value: psycopg dumps an array element by element in Python,
2.3 microseconds per timestamp); elsewhere the executemany stays (PyMySQL
already rewrites it as a multi-row insert; SQLite runs it in-process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db.arrays import array_values, element_type, uses_arrays


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
    fields, arrays, aliases, params = [], [], [], {}
    for index, name in enumerate(names):
        values = [row[name] for row in rows]
        sql_type = element_type(table.c[name]).compile(dialect=dialect)
        key = f"c{index}"
        if values.count(values[0]) == len(values) and (arrays or index < len(names) - 1):
            # the same value in every row (a shared created_at): sent once, not as
            # an array psycopg would dump element by element in Python
            fields.append(f"CAST(:{key} AS {sql_type})")
            params[key] = array_values(table.c[name], values[:1])[0]
            continue
        fields.append(f"u.{key}")
        arrays.append(f"CAST(:{key} AS {sql_type}[])")
        aliases.append(key)
        params[key] = array_values(table.c[name], values)
    connection.execute(
        sa.text(f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, names))}) "
                f"SELECT {', '.join(fields)} "
                f"FROM unnest({', '.join(arrays)}) AS u ({', '.join(aliases)})"),
        params)
