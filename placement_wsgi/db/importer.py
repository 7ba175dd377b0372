"""``placement-manage db import --from URL``: Placement's tables into an empty database.

Until Stein, Placement kept its data in nova's API database (``nova_api``);
a fast-forward upgrade from Queens or Rocky starts by moving those tables
into a Placement database of their own. :func:`import_tables` copies them
from ``source`` (a pre-Stein ``nova_api``, or another Placement database)
into ``target``, which must be empty, and leaves ``target`` at the schema
revision of the source's shape, ready for ``db sync``:

1. the source must hold every table of :data:`NOVA_API_TABLES` (Pike added
   the last of them) and the target no table at all; otherwise
   :class:`ImportRefused`, one line, nothing written;
2. the revision: the Placement revision the source records in
   ``alembic_version``, else (a ``nova_api``) the initial revision
   ``b4ed3a175331``, whose tables are nova_api's (Queens lacks
   ``consumers.generation``: the schema default, 0, fills it);
3. the schema of that revision is created in the target (and recorded);
4. every row is copied in ONE transaction, which before committing
   compares each table's row count with the source's and checks the
   references between the tables (:data:`REFERENCES`; nova_api enforced
   none of them);
5. on any failure the transaction rolls back and the tables step 3 created
   are dropped: the target is empty again.

The source is only read. Columns the source has and the revision's
schema has not (e.g. nova_api's ``resource_providers.can_host``) are left
behind and named in the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import migration
from placement_wsgi.db.database import Database

#: Placement's tables in nova_api (Pike to Stein), parents first: the copy order.
NOVA_API_TABLES = (
    "resource_classes", "traits", "users", "projects", "placement_aggregates",
    "resource_providers", "inventories", "consumers", "allocations",
    "resource_provider_aggregates", "resource_provider_traits")
#: Tables only a Placement database of a later revision has (copied when present).
LATER_TABLES = ("consumer_types",)
#: The revision whose schema is nova_api's Placement tables.
INITIAL_REVISION = "b4ed3a175331"
#: (table, column, referenced table): each non-null value must name a row's ``id``.
REFERENCES = (
    ("resource_providers", "root_provider_id", "resource_providers"),
    ("resource_providers", "parent_provider_id", "resource_providers"),
    ("inventories", "resource_provider_id", "resource_providers"),
    ("allocations", "resource_provider_id", "resource_providers"),
    ("resource_provider_aggregates", "resource_provider_id", "resource_providers"),
    ("resource_provider_aggregates", "aggregate_id", "placement_aggregates"),
    ("resource_provider_traits", "resource_provider_id", "resource_providers"),
    ("resource_provider_traits", "trait_id", "traits"),
    ("consumers", "project_id", "projects"),
    ("consumers", "user_id", "users"),
    ("consumers", "consumer_type_id", "consumer_types"),
)
#: Provider columns copied after every provider row exists (they name other rows).
_PROVIDER_LINKS = ("root_provider_id", "parent_provider_id")
_BATCH = 1000


class ImportRefused(Exception):
    """The import cannot be done as asked; ``str()`` is one line. Nothing was written."""


@dataclasses.dataclass(frozen=True)
class ImportResult:
    """What was imported: the revision recorded, rows per table, columns left behind."""

    revision: str
    rows: dict[str, int]
    ignored_columns: tuple[str, ...] = ()


def import_tables(source: sa.engine.Engine, target: Database, source_name: str) -> ImportResult:
    """Copy Placement's tables from ``source`` into the empty ``target`` (see module doc)."""
    with source.connect() as reading:
        tables = _source_tables(reading, source_name)
        revision = _source_revision(reading, tables, source_name)
        target_tables = sa.inspect(target.engine).get_table_names()
        if target_tables:
            raise ImportRefused(
                f"the target database is not empty (it has {len(target_tables)} tables, "
                f"e.g. {sorted(target_tables)[0]}): db import needs an empty database")
        try:
            migration.create_at(target, revision)
            result = target.write(_copy_all, reading, tables, revision)
        except BaseException:
            _drop_everything(target)
            raise
    return result


#: The tables whose rows are Placement's data: a database holding none of them is
#: empty for a command that fills it (``nova-reshape-manage placement rebuild``).
DATA_TABLES = ("resource_providers", "consumers")


def data_held(engine: sa.engine.Engine) -> dict[str, int]:
    """Rows of each of :data:`DATA_TABLES` the database at ``engine`` holds (those
    with none left out: empty means empty); read-only. Unlike :func:`import_tables`,
    which needs a database without tables, the schema itself may be there."""
    present = set(sa.inspect(engine).get_table_names())
    held = {}
    with engine.connect() as connection:
        for name in DATA_TABLES:
            if name in present:
                count = connection.execute(sa.select(sa.func.count()).select_from(
                    sa.table(name))).scalar_one()
                if count:
                    held[name] = count
    return held


def _source_tables(reading: Connection, source_name: str) -> list[str]:
    present = set(sa.inspect(reading).get_table_names())
    for name in NOVA_API_TABLES:
        if name not in present:
            raise ImportRefused(
                f"the source {source_name} has no table {name}: it is not a nova_api "
                "database of Pike or later, nor a Placement database")
    later = [name for name in LATER_TABLES if name in present]
    order = list(NOVA_API_TABLES)
    order[order.index("consumers"):order.index("consumers")] = later
    return order


def _source_revision(reading: Connection, tables: list[str], source_name: str) -> str:
    """The Placement revision the source records, else the initial one (nova_api)."""
    if sa.inspect(reading).has_table("alembic_version"):
        recorded = reading.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        if recorded in migration.known_revisions():
            return str(recorded)
    if any(name in tables for name in LATER_TABLES):
        raise ImportRefused(f"the source {source_name} has Placement tables of a revision "
                            "after the first but records no Placement revision")
    return INITIAL_REVISION


def _copy_all(writing: Connection, reading: Connection, tables: list[str],
              revision: str) -> ImportResult:
    rows, ignored, with_ids = {}, [], []
    for name in tables:
        source_table = sa.Table(name, sa.MetaData(), autoload_with=reading)
        target_table = sa.Table(name, sa.MetaData(), autoload_with=writing)
        if "id" in target_table.c:
            with_ids.append(name)
        columns = _shared_columns(source_table, target_table)
        ignored.extend(f"{name}.{column}" for column in source_table.c.keys()
                       if column not in target_table.c)
        rows[name] = _copy_table(writing, reading, source_table, target_table, columns)
    for name in tables:
        counts = [connection.execute(sa.select(sa.func.count()).select_from(sa.table(name)))
                  .scalar() for connection in (reading, writing)]
        if counts[0] != counts[1] or counts[0] != rows[name]:
            raise ImportRefused(f"table {name}: the source holds {counts[0]} rows but "
                                f"{counts[1]} were written; nothing imported")
    for problem in _broken_references(writing, tables):
        raise ImportRefused(problem + "; nothing imported (fix the source on the old "
                            "release, e.g. delete the rows, and run the import again)")
    _advance_sequences(writing, with_ids)
    return ImportResult(revision, rows, tuple(ignored))


def _shared_columns(source: sa.Table, target: sa.Table) -> list[str]:
    """The target's columns the source has; a target column the source lacks must be
    nullable or have a default (Queens' consumers have no generation: it becomes 0)."""
    for column in target.columns:
        if column.name not in source.c and not (column.nullable or
                                                column.server_default is not None):
            raise ImportRefused(f"the source's table {source.name} has no column "
                                f"{column.name}, which revision's schema requires")
    return [column.name for column in target.columns if column.name in source.c]


def _copy_table(writing: Connection, reading: Connection, source: sa.Table,
                target: sa.Table, columns: list[str]) -> int:
    """Copy the rows in batches, ordered by primary key; the number copied."""
    links = [name for name in _PROVIDER_LINKS if name in columns] \
        if target.name == "resource_providers" else []
    plain = [name for name in columns if name not in links]
    order = list(source.primary_key.columns) or [source.c[columns[0]]]
    query = sa.select(*(source.c[name] for name in columns)).order_by(*order)
    count = 0
    for batch in _batches(reading, query):
        writing.execute(target.insert(), [{name: row[name] for name in plain} for row in batch])
        if links:  # providers name each other: set the links once all rows exist
            writing.execute(target.update().where(target.c.id == sa.bindparam("link_id"))
                            .values({name: sa.bindparam(f"link_{name}") for name in links}),
                            [{"link_id": row["id"], **{f"link_{name}": row[name]
                                                       for name in links}} for row in batch])
        count += len(batch)
    return count


def _batches(reading: Connection, query: sa.Select) -> Iterator[list[dict]]:
    result = reading.execution_options(stream_results=True).execute(query)
    for partition in result.mappings().partitions(_BATCH):
        yield [dict(row) for row in partition]


def _broken_references(writing: Connection, tables: list[str]) -> Iterator[str]:
    for table, column, parent in REFERENCES:
        if table not in tables or parent not in tables:
            continue
        child = sa.table(table, sa.column(column))
        referenced = sa.table(parent, sa.column("id")).alias("referenced")
        orphans = writing.execute(
            sa.select(sa.func.count()).select_from(child.outerjoin(
                referenced, child.c[column] == referenced.c.id))
            .where(child.c[column].is_not(None), referenced.c.id.is_(None))).scalar()
        if orphans:
            yield f"{orphans} row(s) of {table} name a {column} that {parent} does not hold"


def _advance_sequences(writing: Connection, tables: list[str]) -> None:
    """PostgreSQL: the id sequences of ``tables`` continue after the copied ids (MySQL
    and SQLite move theirs on explicit ids)."""
    if writing.dialect.name != "postgresql":
        return
    for name in tables:
        sequence = writing.execute(sa.text("SELECT pg_get_serial_sequence(:t, 'id')"),
                                   {"t": name}).scalar()
        if sequence:
            writing.execute(sa.text(f"SELECT setval(:s, (SELECT COALESCE(MAX(id), 0) + 1 "
                                    f"FROM {name}), false)"), {"s": sequence})


def _drop_everything(target: Database) -> None:
    """Leave the target as empty as it was found (it held no table before)."""
    metadata = sa.MetaData()
    metadata.reflect(target.engine)
    metadata.drop_all(target.engine)
