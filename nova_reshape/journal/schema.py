"""The journal's tables in the Placement database, and their own version chain.

The journal lives beside Placement's tables, in the same database, so that
in-process a node's journal entry is written in the very transaction that
changes the node (see docs/journal.md for why there and not in a file).
It must never disturb Placement itself, so:

* its tables are all named ``nova_reshape_journal_*``, which no Placement
  release uses, and hold no foreign key into Placement's tables (Placement
  may delete a provider the journal remembers);
* its schema version is kept in a table of its own
  (:data:`VERSION_TABLE`), never in Placement's ``alembic_version``, so
  ``placement-manage db sync`` (ours or upstream's) and Placement's schema
  checks see exactly the revision they wrote;
* the tables are created by the first run that journals (:func:`ensure`),
  never by a command that only reads (:func:`present`).

Upgrades are the ordered :data:`STEPS`: each a version name and the function
that brings the previous version's tables to it, run in one transaction per
step (DDL on MySQL commits by itself; each step is written so that running
it again after a cut is harmless).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Connection, Engine

#: The journal's own schema version table (one row, ``version``).
VERSION_TABLE = "nova_reshape_journal_version"
PREFIX = "nova_reshape_journal_"

#: JSON documents: a node's tree can be large, MySQL's TEXT stops at 64 KiB.
Document = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")

#: Times to the microsecond: MySQL's plain DATETIME keeps whole seconds, and
#: runs started in the same second would list in no particular order.
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")

metadata = sa.MetaData()

version = sa.Table(VERSION_TABLE, metadata, sa.Column("version", sa.String(32), nullable=False))

#: One row per journaled run.
runs = sa.Table(
    f"{PREFIX}runs", metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("command", sa.String(64), nullable=False),
    sa.Column("command_line", sa.Text(), nullable=False),
    sa.Column("inputs", Document, nullable=False),
    sa.Column("started_at", Timestamp, nullable=False),
    sa.Column("ended_at", Timestamp, nullable=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("counts", sa.Text(), nullable=True),
    sa.Column("reverts", sa.String(36), nullable=True),
)

#: One row per node a run changed, committed with the node's change.
nodes = sa.Table(
    f"{PREFIX}nodes", metadata,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.Column("nodename", sa.String(255), nullable=False),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("root", sa.String(36), nullable=False),
    sa.Column("before", Document, nullable=False),
    sa.Column("after", Document, nullable=False),
    sa.Column("recorded_at", Timestamp, nullable=False),
    sa.UniqueConstraint("run_id", "root", name=f"uniq_{PREFIX}nodes0run_id0root"),
    sa.Index(f"{PREFIX}nodes_run_idx", "run_id"),
)


class JournalSchemaError(Exception):
    """The journal's tables are at a version this code does not know (a newer tool wrote them)."""


def _create_first(connection: Connection) -> None:
    metadata.create_all(connection, tables=[runs, nodes], checkfirst=True)


def _microseconds(connection: Connection) -> None:
    """MySQL/MariaDB: the version 1 tables' times to the microsecond (other engines
    kept them so already; running it again changes nothing)."""
    if connection.dialect.name not in ("mysql", "mariadb"):
        return
    connection.exec_driver_sql(
        f"ALTER TABLE {runs.name} MODIFY started_at DATETIME(6) NOT NULL, "
        "MODIFY ended_at DATETIME(6) NULL")
    connection.exec_driver_sql(
        f"ALTER TABLE {nodes.name} MODIFY recorded_at DATETIME(6) NOT NULL")


#: Version name -> what brings the tables from the previous version to it, oldest first.
STEPS: tuple[tuple[str, Callable[[Connection], None]], ...] = (
    ("1", _create_first), ("2", _microseconds))
HEAD = STEPS[-1][0]


def present(connection: Connection) -> bool:
    """Whether this database holds a journal (nothing is created)."""
    return sa.inspect(connection).has_table(VERSION_TABLE)


def current_version(connection: Connection) -> str | None:
    """The journal's version in this database, None when it has none."""
    if not present(connection):
        return None
    return connection.execute(sa.select(version.c.version)).scalar()


def ensure(engine: Engine) -> str:
    """Create or upgrade the journal's tables to :data:`HEAD`; returns it.

    Raises :class:`JournalSchemaError` for a version this code does not know.
    """
    with engine.begin() as connection:
        metadata.create_all(connection, tables=[version], checkfirst=True)
        found = connection.execute(sa.select(version.c.version)).scalar()
    names = [name for name, _ in STEPS]
    if found is not None and found not in names:
        raise JournalSchemaError(
            f"the journal's tables are at version {found}, unknown to this tool (it knows "
            f"{', '.join(names)}): a newer nova-reshape wrote them; use that version")
    start = 0 if found is None else names.index(found) + 1
    for name, step in STEPS[start:]:
        with engine.begin() as connection:
            step(connection)
            if found is None:
                connection.execute(version.insert().values(version=name))
            else:
                connection.execute(version.update().values(version=name))
            found = name
    return HEAD
