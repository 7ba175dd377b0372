"""The journal of a run over ``--placement-url``: a SQLite file, written in two steps per node.

Over HTTP a node's change is a sequence of requests around one ``POST
/reshaper``: there is no transaction a journal entry could share with it.
So a run over HTTP journals each node twice, in a SQLite file of its own
(the same runs and node tables as the database journal,
:mod:`~nova_reshape.journal.schema`, plus :data:`intents`):

1. the **intent** (:func:`record_intent`), committed before the node's
   first request: the node as planned from ("before") and as the plan
   leaves it ("planned");
2. the **outcome** (:func:`record_outcome`), once the node was written and
   checked: a normal node entry, its "after" read back from Placement.

A run killed between the two leaves an intent without outcome; a revert
resolves it by reading Placement (docs/journal.md, "Over HTTP"). A node
written again after a generation conflict gets a new intent in place of
the old one (one intent per node and run).

Path mistakes are :class:`JournalFileError` (one line): a missing
directory, a directory, a file that is not a journal (an empty one
included: a run never writes over an existing file that is not its
journal), a damaged journal, a file that cannot be written.
:func:`open_journal` creates a file only when asked to (``create``):
``runs`` and ``revert`` never create one.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from nova_reshape.journal import schema, store, vouched
from nova_reshape.journal.snapshot import Snapshot
from placement_wsgi.objects.inventory_record import Inventory

#: The file's name when the operator names none (in the ``--report`` file's directory,
#: else the current one).
DEFAULT_NAME = "nova-reshape-journal.sqlite"

#: Seconds a writer waits for another process's lock (parallel workers share the file).
BUSY_TIMEOUT = 60

#: One row per node a run over HTTP is about to write: the last plan it wrote from.
intents = sa.Table(
    f"{schema.PREFIX}intents", sa.MetaData(),
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.Column("nodename", sa.String(255), nullable=False),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("root", sa.String(36), nullable=False),
    sa.Column("before", sa.Text(), nullable=False),
    sa.Column("planned", sa.Text(), nullable=False),
    sa.Column("recorded_at", sa.DateTime(), nullable=False),
    sa.UniqueConstraint("run_id", "root", name=f"uniq_{schema.PREFIX}intents0run_id0root"),
)


class JournalFileError(Exception):
    """The journal file cannot be used (one line naming the file and why)."""


def default_path(report: str | None) -> str:
    """Where the journal goes when ``--journal`` is not given: :data:`DEFAULT_NAME`
    beside the ``--report`` file, else in the current directory."""
    directory = os.path.dirname(os.path.abspath(report)) if report else os.getcwd()
    return os.path.join(directory, DEFAULT_NAME)


def _check_journal(path: str) -> None:
    """:class:`JournalFileError` unless ``path`` is a SQLite file holding a journal
    whose version can be read (nothing created). Opened for writing when it may be
    written: SQLite rolls back the transaction a killed run left (its ``-journal``
    file) before any read, and only a writer can."""
    mode = "rw" if os.access(path, os.W_OK) else "ro"
    try:
        connection = sqlite3.connect(f"file:{path}?mode={mode}", uri=True, timeout=BUSY_TIMEOUT)
    except sqlite3.DatabaseError as error:
        raise JournalFileError(f"journal {path}: cannot be read ({error})") from error
    try:
        try:
            found = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                (schema.VERSION_TABLE,)).fetchone() is not None
        except sqlite3.OperationalError as error:  # locked, or read-only with a -journal
            raise JournalFileError(f"journal {path}: cannot be read ({error})") from error
        except sqlite3.DatabaseError:  # "file is not a database"
            found = False
        if not found:
            raise JournalFileError(f"journal {path}: not a nova-reshape journal")
        try:
            connection.execute(f"SELECT version FROM {schema.VERSION_TABLE}").fetchall()
        except sqlite3.DatabaseError as error:  # "database disk image is malformed"
            raise JournalFileError(f"journal {path}: a damaged nova-reshape journal "
                                   f"({error})") from error
    finally:
        connection.close()


def check_path(path: str, *, create: bool) -> None:
    """:class:`JournalFileError` when ``path`` cannot serve as the journal: written by
    a run (``create``: a new or empty file, or an existing journal) or only read."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise JournalFileError(f"journal {path}: the directory {directory} does not exist")
    if os.path.isdir(path):
        raise JournalFileError(f"journal {path}: is a directory; name a file")
    if not os.path.exists(path):
        if not create:
            raise JournalFileError(f"journal {path}: no such file")
        if not os.access(directory, os.W_OK):
            raise JournalFileError(f"journal {path}: cannot create a file in {directory}")
        return
    if not os.path.getsize(path):
        # ``J=$(mktemp)`` then ``--journal "$J"``: an empty file is a new journal
        # for a run that writes one (SQLite takes it as an empty database), and
        # holds no run for a command that only reads.
        if not create:
            raise JournalFileError(f"journal {path}: empty, not a nova-reshape journal")
        if not os.access(path, os.W_OK):
            raise JournalFileError(f"journal {path}: cannot be written")
        return
    _check_journal(path)
    if create and not os.access(path, os.W_OK):
        raise JournalFileError(f"journal {path}: cannot be written")


def open_journal(path: str, *, create: bool) -> Engine:
    """The journal file's engine, checked (:func:`check_path`); with ``create`` its
    tables are made (a new file) or brought to head. The caller disposes of it.

    SQLite's refusals of the file on that first write (a read-only file or
    directory, a full disk: ``OperationalError``; a file damaged since the
    check: ``DatabaseError``, its parent) are :class:`JournalFileError` too."""
    check_path(path, create=create)
    engine = sa.create_engine(f"sqlite:///{os.path.abspath(path)}",
                              connect_args={"timeout": BUSY_TIMEOUT})
    if create:
        try:
            schema.ensure(engine)
            add_tables(engine)
        except sa.exc.DatabaseError as error:
            engine.dispose()
            why = ("cannot be written" if isinstance(error, sa.exc.OperationalError)
                   else "a damaged nova-reshape journal")
            raise JournalFileError(f"journal {path}: {why} ({error.orig})") from error
    return engine


def add_tables(engine: Engine) -> None:
    """The file's own tables (:data:`intents`, :data:`~nova_reshape.journal.vouched.
    vouched`) where missing: a file written by an earlier version may lack one."""
    with engine.begin() as connection:
        intents.create(connection, checkfirst=True)
        vouched.create(connection)


def _document(snapshot: Snapshot) -> str:
    return json.dumps(snapshot.to_dict(), separators=(",", ":"))


def as_stored(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with each inventory record as Placement stores it: a plan's
    records leave out the fields at their default (reserved, min_unit, ...), which
    Placement fills in and answers."""
    return dataclasses.replace(snapshot, inventories={
        uuid: {rc: Inventory.from_body(rc, record).as_dict() for rc, record in records.items()}
        for uuid, records in snapshot.inventories.items()})


def record_intent(engine: Engine, run_id: str, nodename: str, host: str | None,
                  before: Snapshot, planned: Snapshot) -> None:
    """Commit the node's intent (replacing an earlier one of the same run) before
    its first request; ``planned`` as Placement will store it (:func:`as_stored`).
    No earlier outcome vouches for the node any more (:func:`~nova_reshape.journal.
    vouched.forget`)."""
    planned = as_stored(planned)
    with engine.begin() as connection:
        vouched.forget(connection, before.root)
        connection.execute(intents.delete().where(
            (intents.c.run_id == run_id) & (intents.c.root == before.root)))
        connection.execute(intents.insert().values(
            run_id=run_id, nodename=nodename, host=host, root=before.root,
            before=_document(before), planned=_document(planned),
            recorded_at=datetime.datetime.now(datetime.UTC).replace(tzinfo=None)))


def record_outcome(engine: Engine, run_id: str, nodename: str, host: str | None,
                   before: Snapshot, after: Snapshot, *,
                   vouched_in: str | None = None) -> None:
    """Commit the node's outcome: its entry, ``after`` as read back once checked.
    ``vouched_in``: the service (:func:`~nova_reshape.transport.http.service_url`)
    in which ``after`` holds each provider's inventories and traits as stored at
    its recorded generation; a later run on it may take them from the record
    (:mod:`~nova_reshape.journal.vouched`)."""
    with engine.begin() as connection:
        entry_id = store.record_node(connection, run_id, nodename, host, before, after)
        if vouched_in is not None:
            vouched.vouch(connection, run_id, before.root, entry_id, vouched_in)
        else:
            vouched.forget(connection, before.root)


class FileEntry(NamedTuple):
    """A node of a run over HTTP: its entry; ``pending`` when only the intent was
    committed (then ``entry.after`` is the planned "after", unconfirmed)."""

    entry: store.NodeEntry
    pending: bool


def _has_intents(engine: Engine) -> bool:
    with engine.connect() as connection:
        return sa.inspect(connection).has_table(intents.name)


def entry_keys(engine: Engine, run_id: str) -> list[store.EntryKey]:
    """Every node of run ``run_id``: its entries (outcomes) in the order written, then
    the intents without an outcome. Key ids are ``+entry id`` and ``-intent id``."""
    keys = store.entry_keys(engine, run_id)
    if not _has_intents(engine):
        return keys
    nodes = schema.nodes
    done = sa.select(nodes.c.root).where(nodes.c.run_id == run_id)
    with engine.connect() as connection:
        keys += [store.EntryKey(-row.id, row.nodename, row.host) for row in connection.execute(
            sa.select(intents.c.id, intents.c.nodename, intents.c.host)
            .where((intents.c.run_id == run_id) & intents.c.root.not_in(done))
            .order_by(intents.c.id))]
    return keys


def entries_of(engine: Engine, keys: Sequence[store.EntryKey],
               batch_size: int = 200) -> Iterator[list[FileEntry]]:
    """The nodes of ``keys`` (:func:`entry_keys`), a batch at a time, in their order."""
    for start in range(0, len(keys), batch_size):
        batch = keys[start:start + batch_size]
        done = [key for key in batch if key.id > 0]
        written = dict(zip((key.id for key in done),
                           (entry for part in store.entries_of(engine, done, batch_size)
                            for entry in part), strict=True))
        with engine.connect() as connection:
            rows = {row.id: row for row in connection.execute(sa.select(intents).where(
                intents.c.id.in_([-key.id for key in batch if key.id < 0])))} if any(
                key.id < 0 for key in batch) else {}
        found = []
        for key in batch:
            if key.id > 0:
                found.append(FileEntry(written[key.id], False))
                continue
            row = rows[-key.id]
            found.append(FileEntry(store.NodeEntry(
                row.run_id, row.nodename, row.host, row.root,
                Snapshot.from_dict(json.loads(row.before)),
                Snapshot.from_dict(json.loads(row.planned)), row.recorded_at), True))
        yield found
