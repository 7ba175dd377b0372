"""Reading large result sets as plain tuples, cheaply on every driver.

The candidate engine reads thousands of rows per request (inventories,
providers, traits of every provider that may serve it). What that costs is
mostly client-side and depends on the driver:

* SQLite and psycopg decode rows in C; building SQLAlchemy ``Row`` objects
  on top is what costs, so :func:`connection_rows` goes to the DB-API cursor
  directly.
* PyMySQL is pure Python and pays per row (one protocol packet, a length
  prefix and a converter call per field): on MariaDB 3,000 inventory rows
  took ~20 ms to read against ~1 ms to run on the server, the main reason
  the candidate query took over twice as long there as on SQLite or
  PostgreSQL. On MariaDB the rows are therefore *packed* on the server into
  one JSON-array text (``GROUP_CONCAT``) that ``json.loads`` reads in C
  (see :func:`_packed_rows`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles

from placement_wsgi.capacity import capacity
from placement_wsgi.db import tables

#: ``group_concat_max_len`` for a packing statement. The server still cuts at
#: ``max_allowed_packet``; a cut text is detected and the query re-run plainly.
GROUP_CONCAT_MAX_LEN = 1 << 30

_COMMA = sa.literal_column("','")
_QUOTE = sa.literal_column("'\"'")
_NULL = sa.literal_column("'null'")
#: ``GROUP_CONCAT``'s ``SEPARATOR ''`` clause, written as an operator on its last argument
_LAST_COMMA = _COMMA.op("SEPARATOR")(sa.literal_column("''"))


def in_values(column: sa.ColumnElement, values: Iterable) -> sa.ColumnElement:
    """``column IN (...)`` with bound values (names and uuids from a request)."""
    return column.in_(sorted(values))


class float_as_read(sa.sql.functions.GenericFunction):  # noqa: N801 (an SQL function)
    """A ``Float`` column's value as the driver hands it to Python, as a double in SQL.

    On SQLite and PostgreSQL the column is a double and is sent exactly: the
    column itself. MySQL's and MariaDB's ``FLOAT`` is single precision and
    travels as the server's shortest text for it (``0.7``, not
    ``0.699999988``), which the driver parses into the nearest double: the
    same text, parsed by the server (``CAST(CAST(col AS CHAR) AS DOUBLE)``),
    so that arithmetic on it in SQL gives what Python computes from the
    value it reads.
    """

    type = sa.Float()
    inherit_cache = True


@compiles(float_as_read)
def _float_as_read(element: float_as_read, compiler: Any, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)


@compiles(float_as_read, "mysql")
def _float_as_read_mysql(element: float_as_read, compiler: Any, **kw: Any) -> str:
    return f"CAST(CAST({compiler.process(element.clauses, **kw)} AS CHAR) AS DOUBLE)"


#: An inventory row's capacity computed by the database, on the ``inventories``
#: table's columns: :func:`placement_wsgi.capacity.capacity` with the ratio as the
#: driver reads it (:class:`float_as_read`), so that the product is the float
#: Python computes from the values a plain read gives, on every engine
#: (``tests/functional/placement_wsgi/db/test_capacity_sql.py``). The one home of
#: that expression: the candidate loader selects it, the provider listing's
#: ``resources`` filter compares usage against it.
INVENTORY_CAPACITY: sa.ColumnElement = capacity(
    tables.inventories.c.total, tables.inventories.c.reserved,
    float_as_read(tables.inventories.c.allocation_ratio))


class IdList(NamedTuple):
    """Stands for the ``index``-th id list of a :class:`Statement` while it is built."""

    index: int

    @property
    def mark(self) -> str:
        return f"__id_list_{self.index}__"


def in_ids(column: sa.ColumnElement, ids: Iterable[int] | IdList) -> sa.ColumnElement:
    """``column IN (1,2,...)`` for integer ids, rendered as text.

    The lists can hold tens of thousands of ids: bound, they would exceed
    drivers' parameter limits; rendered by SQLAlchemy's literal processor,
    they cost microseconds each. :func:`connection_rows` compiles such
    statements per execution (they never enter the compiled cache); a
    :class:`Statement` passes :class:`IdList` placeholders instead and is
    compiled once.
    """
    if isinstance(ids, IdList):
        return column.op("IN")(sa.literal_column(f"({ids.mark})"))
    text = ",".join(map(str, map(int, ids)))
    if not text:
        return sa.false()
    return column.op("IN")(sa.literal_column(f"({text})"))


class _Compiled(NamedTuple):
    text: str
    params: Any
    #: MariaDB: the packing statement (see :func:`_packed_rows`), or None
    packed: _Packed | None
    #: psycopg: ask for the rows in binary format (see :meth:`Statement.rows`)
    binary: bool = False


class Statement:
    """A SELECT whose only varying parts are integer id lists, compiled once per dialect.

    Building a SQLAlchemy statement and compiling it costs about 0.3 ms of
    Python; the candidate engine runs about ten per request, which was a
    fifth of a 1,000-provider answer. ``build`` is called once per dialect
    with one :class:`IdList` per parameter, to pass to :func:`in_ids`; each
    :meth:`rows` call writes its id lists into the compiled text. An empty
    list is written as ``-1``, an id no table uses: ``IN`` matches nothing,
    ``NOT IN`` everything. Bound constants (``LIMIT 1``) are kept as compiled.
    """

    def __init__(self, build: Callable[..., sa.Select]) -> None:
        self._build = build
        self._lists = len(inspect.signature(build).parameters)
        self._compiled: dict[tuple[str, bool], _Compiled] = {}

    def _compile(self, connection: Connection) -> _Compiled:
        dialect = connection.dialect
        key = (dialect.name, bool(getattr(dialect, "is_mariadb", False)))
        found = self._compiled.get(key)
        if found is None:
            query = self._build(*map(IdList, range(self._lists)))
            text, params = _plain_statement(connection, query)
            if dialect.name == "postgresql":
                # one array literal instead of a list of constants: PostgreSQL
                # parses and plans a list of thousands of constants one node at
                # a time (1.2 ms of server CPU for 1,000 ids, no row returned)
                for index in range(self._lists):
                    mark = IdList(index).mark
                    text = text.replace(f"IN ({mark})", f"= ANY('{{{mark}}}'::integer[])")
            packed = _pack(connection, query) if _packable(connection, query) else None
            binary = dialect.driver == "psycopg" and all(
                _kind(column) is not None for column in query.selected_columns)
            found = self._compiled[key] = _Compiled(text, params, packed, binary)
        return found

    def rows(self, connection: Connection, *id_lists: Iterable[int]) -> list[tuple]:
        """All rows as plain tuples, as :func:`connection_rows` reads them.

        On psycopg, statements whose columns are all integers, floats or
        strings ask for binary rows: the same Python values (``float8`` is
        sent exactly either way), without parsing each number from text (a
        third of the client's cost of 3,000 inventory rows)."""
        compiled = self._compile(connection)
        text, packed_text = compiled.text, compiled.packed and compiled.packed.text
        for index, ids in enumerate(id_lists):
            mark = IdList(index).mark
            written = ",".join(map(str, map(int, ids))) or "-1"
            text = text.replace(mark, written)
            if packed_text:
                packed_text = packed_text.replace(mark, written)
        if compiled.packed is not None:
            rows = _read_packed(connection, compiled.packed._replace(text=packed_text))
            if rows is not None:
                return rows
        return _run(connection, text, compiled.params, compiled.binary)


def connection_rows(connection: Connection, query: sa.Select) -> list[tuple]:
    """All rows of ``query`` as plain tuples, in no particular order.

    SQLAlchemy compiles the statement; the driver's cursor runs it inside the
    connection's transaction. Values are the driver's, except on MariaDB,
    where integer columns (sums included) come back as ``int``, float columns
    as ``float`` and string columns as ``str`` (what PyMySQL gives, bar
    ``Decimal`` sums, which callers convert with ``int()`` anyway).
    A query with ``ORDER BY``, ``LIMIT`` or ``OFFSET`` is read plainly, so
    its order and its limit hold.
    """
    if _packable(connection, query):
        rows = _packed_rows(connection, query)
        if rows is not None:
            return rows
    return _plain_rows(connection, query)


def _plain_statement(connection: Connection, query: sa.Executable) -> tuple[str, Any]:
    """The SQL text of ``query`` and its parameters, in the driver's style."""
    dialect = connection.dialect
    compiled = query.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.params
    if dialect.positional:
        params = tuple(params[name] for name in compiled.positiontup)
    return str(compiled), params


def _run(connection: Connection, text: str, params: Any, binary: bool = False) -> list[tuple]:
    cursor = connection.connection.cursor()
    try:
        if binary:
            cursor.execute(text, params, binary=True)
        else:
            cursor.execute(text, params)
        return cursor.fetchall()
    finally:
        cursor.close()


def _plain_rows(connection: Connection, query: sa.Executable) -> list[tuple]:
    return _run(connection, *_plain_statement(connection, query))


def _kind(column: sa.ColumnElement) -> type | None:
    """The Python type a packed field of ``column`` reads as; None: not packable."""
    try:
        kind = column.type.python_type
    except NotImplementedError:  # a type without a Python equivalent (NullType)
        return None
    return kind if kind in (int, float, str) else None  # Decimal, dates, bool: plainly


def _same(query: sa.Select, variant: sa.Select) -> bool:
    """Whether ``variant`` is the same statement as ``query`` (public ``compare()``).

    SQLAlchemy has no public accessor for a statement's ORDER BY, LIMIT,
    GROUP BY or DISTINCT; comparing the statement with a copy where one of
    them is reset (or set) tells whether it has one, through public API only.
    """
    return query.compare(variant)


def _packable(connection: Connection, query: sa.Select) -> bool:
    """MariaDB, a SELECT whose fields all pack, and no order or row limit to keep."""
    dialect = connection.dialect
    return (dialect.name == "mysql" and getattr(dialect, "is_mariadb", False)
            and isinstance(query, sa.Select)
            and all(_kind(column) is not None for column in query.selected_columns)
            and _same(query, query.order_by(None).limit(None).offset(None)))


def _not_null(column: sa.ColumnElement) -> bool:
    return isinstance(column, sa.Column) and not column.nullable


def _row_wise(query: sa.Select) -> bool:
    """True when ``query``'s columns can be aggregated in place (no derived table).

    MariaDB materialises a derived table built on a semi-join (``EXISTS``):
    packing the provider query through one took the server 19 ms instead of
    12 (nested bench); only grouping, ``DISTINCT`` or aggregates need one.
    """
    return (all(isinstance(column, (sa.Column, sa.sql.functions.coalesce))
                for column in query.selected_columns)
            and _same(query, query.group_by(None))
            and not _same(query, query.distinct()))


def _pack_statement(query: sa.Select, kinds: list[type], nullable: list[bool]) -> sa.Select:
    """``SELECT COUNT(*), GROUP_CONCAT(f1, ',', ..., fn, ',' SEPARATOR '')`` over
    ``query``'s rows (see :func:`_packed_rows`)."""
    row_wise = _row_wise(query)
    if row_wise:
        columns: list[sa.ColumnElement] = list(query.selected_columns)
    else:
        packed = query.subquery("packed")
        columns = list(packed.c)
    arguments: list[sa.ColumnElement] = []
    for column, kind, may_be_null in zip(columns, kinds, nullable, strict=True):
        if kind is str and not may_be_null:
            arguments += [_QUOTE, column, _QUOTE, _COMMA]  # cheaper than CONCAT
            continue
        field = sa.func.concat(_QUOTE, column, _QUOTE) if kind is str else column
        if may_be_null:
            field = sa.func.coalesce(field, _NULL)
        arguments += [field, _COMMA]
    arguments[-1] = _LAST_COMMA
    aggregates = (sa.func.count(), sa.func.group_concat(*arguments))
    if row_wise:
        return query.with_only_columns(*aggregates)
    return sa.select(*aggregates).select_from(packed)


class _Packed(NamedTuple):
    text: str
    params: Any
    kinds: list[type]
    nullable: list[bool]


def _pack(connection: Connection, query: sa.Select) -> _Packed:
    """The packing statement of ``query`` (see :func:`_packed_rows`)."""
    kinds = [_kind(column) for column in query.selected_columns]
    nullable = [not _not_null(column) for column in query.selected_columns]
    statement = _pack_statement(query, kinds, nullable)
    compiled = statement.compile(dialect=connection.dialect,
                                 compile_kwargs={"render_postcompile": True})
    text = (f"SET STATEMENT group_concat_max_len = {int(GROUP_CONCAT_MAX_LEN)} FOR "
            f"{compiled}")
    return _Packed(text, compiled.params, kinds, nullable)


def _packed_rows(connection: Connection, query: sa.Select) -> list[tuple] | None:
    """MariaDB: read ``query`` as one JSON-array text; None when that failed.

    One row comes back: the row count and every field followed by a comma,
    numbers as the server prints them, strings in double quotes, NULL as
    ``null``, which ``json.loads`` (C) reads at once. ``GROUP_CONCAT`` costs
    the server far less than ``JSON_ARRAYAGG`` or ``JSON_QUOTE``, and needs
    the ``COALESCE`` (it skips rows with a NULL argument). ``SET STATEMENT``
    (MariaDB only) lifts ``group_concat_max_len`` for this statement alone.

    The text is trusted only when it parses, ends with the last comma, holds
    ``count x width`` values and exactly the quotes the string fields add, and
    no backslash: so no value was cut and no string held a quote or an
    escape. Otherwise None, and the caller reads the rows plainly. The server
    prints FLOAT columns exactly as its text protocol does, so ``float()`` of
    the parsed number is what PyMySQL gives.
    """
    return _read_packed(connection, _pack(connection, query))


def _read_packed(connection: Connection, packed: _Packed) -> list[tuple] | None:
    """Run a packing statement; its rows, or None when the text cannot be trusted."""
    kinds, nullable = packed.kinds, packed.nullable
    cursor = connection.connection.cursor()
    try:
        cursor.execute(packed.text, packed.params)
        count, joined = cursor.fetchone()
    finally:
        cursor.close()
    if not count:
        return []
    if isinstance(joined, bytes):
        joined = joined.decode()
    if not joined or joined[-1] != "," or "\\" in joined:
        return None
    try:
        values = json.loads(f"[{joined[:-1]}]")
    except ValueError:
        return None
    width = len(kinds)
    if len(values) != count * width:
        return None
    quotes = 0
    for index, kind in enumerate(kinds):
        if kind is str:
            quotes += 2 * (count - values[index::width].count(None) if nullable[index] else count)
        elif kind is float:  # the server prints 2.0 as 2
            values[index::width] = [None if value is None else float(value)
                                    for value in values[index::width]]
    if quotes and joined.count('"') != quotes:
        return None
    return list(zip(*[iter(values)] * width, strict=True))
