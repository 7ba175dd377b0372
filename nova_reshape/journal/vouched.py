"""The nodes a journal file vouches for: as recorded, at the recorded generations.

A run over HTTP records each node it wrote as read back (the outcome,
:mod:`~nova_reshape.journal.journal_file`). When that read-back was the
tree's listing alone, each provider listed at the generation the node's own
writes explain (:func:`~nova_reshape.compute.readback.as_listed`), the
outcome's "after" holds each provider's inventories and traits as Placement
stores them at the recorded generation. Every inventory, trait or aggregate
write bumps a provider's generation, so a later run that lists every
provider of the tree with the same uuid, name, parent and exactly that
generation may take the inventories and traits from the record instead of
reading them (docs/performance.md, "Third pass").

This module keeps which outcome vouches for which root: :data:`vouched`,
one row per root at most, naming the node entry. The row is written with
the outcome (:func:`vouch`) and dropped with any later intent for the root
(:func:`forget`: a migration writing the node again, a revert putting it
back), so a row stands only while its outcome is the last thing the file
recorded for the node. Allocations are never taken from a record:
``DELETE /allocations/{consumer}`` moves no generation.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from nova_reshape.journal import schema
from nova_reshape.journal.snapshot import Snapshot

#: One row per root whose last record in the file is an outcome that vouches for it.
vouched = sa.Table(
    f"{schema.PREFIX}vouched", sa.MetaData(),
    sa.Column("root", sa.String(36), primary_key=True),
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.Column("entry_id", sa.Integer(), nullable=False),
    #: The service the outcome was read back from (its URL, password masked).
    sa.Column("placement", sa.Text(), nullable=False),
)

#: Roots looked up per statement (SQLite's bound parameters stay well under its limit).
CHUNK = 500


def create(connection: Connection) -> None:
    """The table, if the file has none yet (files written before it held none)."""
    vouched.create(connection, checkfirst=True)


def forget(connection: Connection, root: str) -> None:
    """No outcome vouches for ``root`` any more (it is about to be written)."""
    connection.execute(vouched.delete().where(vouched.c.root == root))


def vouch(connection: Connection, run_id: str, root: str, entry_id: int,
          placement: str) -> None:
    """The outcome ``entry_id`` of run ``run_id`` vouches for ``root`` as read back
    from the service at ``placement``."""
    forget(connection, root)
    connection.execute(vouched.insert().values(root=root, run_id=run_id, entry_id=entry_id,
                                               placement=placement))


def recorded(engine: Engine, roots: Collection[str], placement: str) -> dict[str, Snapshot]:
    """root -> the "after" of the outcome vouching for it, for each of ``roots``
    that has one read back from the service at ``placement`` (another
    Placement's record, even of the same uuids, is not this one's; a file
    without the table has none). Only ``roots`` are read: memory follows the
    batch, not the file."""
    found: dict[str, Snapshot] = {}
    roots = sorted(roots)
    if not roots:
        return found
    nodes = schema.nodes
    with engine.connect() as connection:
        if not sa.inspect(connection).has_table(vouched.name):
            return found
        for start in range(0, len(roots), CHUNK):
            chunk = roots[start:start + CHUNK]
            for row in connection.execute(
                    sa.select(vouched.c.root, nodes.c.after)
                    .join(nodes, (nodes.c.id == vouched.c.entry_id)
                          & (nodes.c.run_id == vouched.c.run_id)
                          & (nodes.c.root == vouched.c.root))
                    .where(vouched.c.root.in_(chunk) & (vouched.c.placement == placement))):
                found[row.root] = Snapshot.from_dict(json.loads(row.after))
    return found


def listed(records: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """uuid -> (name, parent, generation) of a tree's providers as listed (1.14)."""
    return {record["uuid"]: (record["name"], record.get("parent_provider_uuid"),
                             record["generation"]) for record in records}


def matches(snapshot: Snapshot, records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``records`` (the tree's listing) show exactly the providers of
    ``snapshot``, each with its uuid, name, parent and generation: then each
    holds the inventories and traits recorded (module docstring)."""
    then = {p["uuid"]: (p["name"], p["parent"], p["generation"]) for p in snapshot.providers}
    return (None not in (generation for _name, _parent, generation in then.values())
            and listed(records) == then)
