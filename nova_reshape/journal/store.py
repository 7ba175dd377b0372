"""Runs and node entries: writing them and reading them back.

A run that writes to Placement is recorded in three steps:

1. :func:`start_run` (its own short transaction, before any node is
   written): id, command, command line, inputs, start time, status
   ``running``;
2. :func:`record_node`, once per changed node, on the connection of the
   transaction that changes the node: its snapshot before and after
   (:mod:`~nova_reshape.journal.snapshot`). The entry commits with the
   node's change or not at all, so a killed run leaves exactly one entry
   per node it changed;
3. :func:`finish_run`: end time, final status and the counts of nodes by
   outcome. A run killed before this step stays ``running`` with no end
   time; its entries are still exact.

The readers (:func:`list_runs`, :func:`get_run`, :func:`entries`) never
create anything: on a database without a journal they return nothing.
"""

from __future__ import annotations

import datetime
import enum
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from nova_reshape.journal import names, schema
from nova_reshape.journal.snapshot import Snapshot


class RunStatus(enum.StrEnum):
    """A run's state: running (or killed before it could say otherwise), or how it ended."""

    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    REFUSED = "refused"
    CONFLICT = "conflict"
    INVARIANT = "invariant"
    INTERRUPTED = "interrupted"


class Run(NamedTuple):
    """One journaled run. ``changed``: its node entries; ``counts``: nodes by outcome
    as the run ended (empty while running); ``reverts``: the run it reverts, if any."""

    id: str
    command: str
    command_line: str
    inputs: dict[str, Any]
    started_at: datetime.datetime
    ended_at: datetime.datetime | None
    status: RunStatus
    counts: dict[str, int]
    reverts: str | None
    changed: int

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["started_at"] = _time(self.started_at)
        data["ended_at"] = _time(self.ended_at)
        data["status"] = str(self.status)
        return data


class NodeEntry(NamedTuple):
    """What one run did to one node: its tree before and after, in one transaction."""

    run_id: str
    nodename: str
    host: str | None
    root: str
    before: Snapshot
    after: Snapshot
    recorded_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "nodename": self.nodename, "host": self.host,
                "root": self.root, "before": self.before.to_dict(),
                "after": self.after.to_dict(), "recorded_at": _time(self.recorded_at)}


def _time(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.replace(microsecond=0).isoformat() + "Z"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def start_run(engine: Engine, command: str, command_line: str, inputs: Mapping[str, Any],
              reverts: str | None = None,
              custom_names: Mapping[str, list[str]] | None = None) -> str:
    """Record a run starting now (creating the journal's tables if needed); its id.

    The custom traits and classes existing now join the inputs
    (:data:`~nova_reshape.journal.names.INPUT_KEY`), for a revert to forget
    the ones the run creates: read from ``engine`` (the Placement database),
    or ``custom_names`` as read from Placement by the caller (a journal file).
    """
    schema.ensure(engine)
    run_id = str(uuid.uuid4())
    with engine.begin() as connection:
        custom = (dict(custom_names) if custom_names is not None
                  else names.custom_names(connection))
        kept = dict(inputs) | {names.INPUT_KEY: custom}
        connection.execute(schema.runs.insert().values(
            id=run_id, command=command, command_line=command_line,
            inputs=json.dumps(kept, sort_keys=True, default=str),
            started_at=_now(), status=RunStatus.RUNNING.value, reverts=reverts))
    return run_id


def finish_run(engine: Engine, run_id: str, status: RunStatus,
               counts: Mapping[str, int]) -> None:
    """Record how run ``run_id`` ended."""
    with engine.begin() as connection:
        connection.execute(schema.runs.update().where(schema.runs.c.id == run_id).values(
            ended_at=_now(), status=status.value, counts=json.dumps(dict(counts),
                                                                    sort_keys=True)))


class Change(NamedTuple):
    """One node's change to record: its name, host, and snapshots before and after."""

    nodename: str
    host: str | None
    before: Snapshot
    after: Snapshot


def record_node(connection: Connection, run_id: str, nodename: str, host: str | None,
                before: Snapshot, after: Snapshot) -> int:
    """Record a node's change on ``connection``, inside the transaction that makes it;
    the entry's id."""
    return connection.execute(schema.nodes.insert().values(
        run_id=run_id, nodename=nodename, host=host, root=before.root,
        before=json.dumps(before.to_dict(), separators=(",", ":")),
        after=json.dumps(after.to_dict(), separators=(",", ":")), recorded_at=_now())
    ).inserted_primary_key[0]


def record_nodes(connection: Connection, run_id: str, changes: Sequence[Change]) -> list[int]:
    """Record several nodes' changes on ``connection``, inside the transaction that
    makes them all (one statement); the entries' ids, in the order given."""
    if not changes:
        return []
    now = _now()
    rows = [{"run_id": run_id, "nodename": nodename, "host": host, "root": before.root,
             "before": json.dumps(before.to_dict(), separators=(",", ":")),
             "after": json.dumps(after.to_dict(), separators=(",", ":")), "recorded_at": now}
            for nodename, host, before, after in changes]
    return list(connection.execute(
        schema.nodes.insert().returning(schema.nodes.c.id, sort_by_parameter_order=True),
        rows).scalars())


class GroupEntries:
    """The entries of ``size`` nodes written together in ONE transaction
    (:func:`~placement_wsgi.objects.tree_change.apply_tree_changes`), inserted in
    one statement (:func:`record_nodes`) when the group's last node is recorded.

    Each node's check records its own, in the group's order (``index`` 0 to
    ``size - 1``), on the group's connection: the entries commit with the
    group's change or not at all. A transaction run again (a deadlock) records
    them again from the first, which starts over.
    """

    def __init__(self, run_id: str, size: int) -> None:
        self.run_id = run_id
        self.size = size
        self._changes: dict[int, Change] = {}

    def recorder(self, index: int) -> Callable[[Connection, Change], None]:
        """What records node ``index``'s change (:meth:`record`)."""
        return lambda connection, change: self.record(connection, index, change)

    def record(self, connection: Connection, index: int, change: Change) -> None:
        """Node ``index``'s change; the last one inserts the group's entries."""
        if index == 0:
            self._changes = {}
        self._changes[index] = change
        if index == self.size - 1:
            record_nodes(connection, self.run_id,
                         [self._changes[position] for position in range(self.size)])


def update_nodes(connection: Connection, afters: Mapping[int, Snapshot]) -> None:
    """:func:`update_node` for each entry id -> after, in one statement."""
    if not afters:
        return
    nodes = schema.nodes
    now = _now()
    connection.execute(
        nodes.update().where(nodes.c.id == sa.bindparam("entry_id"))
        .values(after=sa.bindparam("new_after"), recorded_at=now),
        [{"entry_id": entry_id, "new_after": json.dumps(after.to_dict(), separators=(",", ":"))}
         for entry_id, after in afters.items()])


def update_node(connection: Connection, entry_id: int, after: Snapshot) -> None:
    """A node its run already recorded (entry ``entry_id``) changed again, on
    ``connection`` inside that change's transaction: the entry keeps its "before"
    and takes ``after`` (a run has one entry per node: the node before the run's
    first change to it and after its last)."""
    nodes = schema.nodes
    connection.execute(nodes.update().where(nodes.c.id == entry_id).values(
        after=json.dumps(after.to_dict(), separators=(",", ":")), recorded_at=_now()))


def _run(row: sa.Row, changed: int) -> Run:
    return Run(id=row.id, command=row.command, command_line=row.command_line,
               inputs=json.loads(row.inputs), started_at=row.started_at,
               ended_at=row.ended_at, status=RunStatus(row.status),
               counts=json.loads(row.counts) if row.counts else {}, reverts=row.reverts,
               changed=changed)


def _runs(connection: Connection, run_id: str | None) -> list[Run]:
    if not schema.present(connection):
        return []
    runs, nodes = schema.runs, schema.nodes
    changed = (sa.select(nodes.c.run_id, sa.func.count().label("changed"))
               .group_by(nodes.c.run_id).subquery())
    query = (sa.select(runs, sa.func.coalesce(changed.c.changed, 0).label("changed"))
             .outerjoin(changed, changed.c.run_id == runs.c.id)
             .order_by(runs.c.started_at, runs.c.id))
    if run_id is not None:
        query = query.where(runs.c.id == run_id)
    return [_run(row, row.changed) for row in connection.execute(query)]


def list_runs(engine: Engine) -> list[Run]:
    """Every journaled run, oldest first (none when the database has no journal)."""
    with engine.connect() as connection:
        return _runs(connection, None)


def get_run(engine: Engine, run_id: str) -> Run | None:
    """Run ``run_id``, or None."""
    with engine.connect() as connection:
        found = _runs(connection, run_id)
    return found[0] if found else None


class EntryKey(NamedTuple):
    """Which node an entry is about, without its snapshots (cheap to list)."""

    id: int
    nodename: str
    host: str | None


def entry_keys(engine: Engine, run_id: str) -> list[EntryKey]:
    """Run ``run_id``'s entries as keys, in the order they were written."""
    with engine.connect() as connection:
        if not schema.present(connection):
            return []
        nodes = schema.nodes
        return [EntryKey(*row) for row in connection.execute(
            sa.select(nodes.c.id, nodes.c.nodename, nodes.c.host)
            .where(nodes.c.run_id == run_id).order_by(nodes.c.id))]


def _entry(row: sa.Row) -> NodeEntry:
    return NodeEntry(row.run_id, row.nodename, row.host, row.root,
                     Snapshot.from_dict(json.loads(row.before)),
                     Snapshot.from_dict(json.loads(row.after)), row.recorded_at)


def entries_of(engine: Engine, keys: Sequence[EntryKey],
               batch_size: int = 200) -> Iterator[list[NodeEntry]]:
    """The entries of ``keys``, read ``batch_size`` at a time (memory bounded by the
    batch, whatever the number of nodes), in the order of ``keys``."""
    nodes = schema.nodes
    for start in range(0, len(keys), batch_size):
        ids = [key.id for key in keys[start:start + batch_size]]
        with engine.connect() as connection:
            rows = {row.id: row for row in connection.execute(
                sa.select(nodes).where(nodes.c.id.in_(ids)))}
        yield [_entry(rows[entry_id]) for entry_id in ids]


def entries(engine: Engine, run_id: str) -> list[NodeEntry]:
    """Run ``run_id``'s node entries, in the order they were written (all at once:
    for a run of many nodes, :func:`entry_keys` and :func:`entries_of`)."""
    return [entry for batch in entries_of(engine, entry_keys(engine, run_id))
            for entry in batch]
