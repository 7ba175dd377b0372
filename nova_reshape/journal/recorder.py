"""The journal's face for commands that write to Placement.

A command that changes nodes journals them like this (in-process on the
database; ``engine`` is :attr:`PlacementDirect.database.engine`)::

    with journal.recording(engine, "heal_allocations", journal.command_line(argv),
                           {"cells": [...]}) as run:
        ...
        before = journal.of_state(state_read)            # the node as the change found it
        def record(connection, state_after):             # inside the change's transaction
            run.record(connection, nodename, host, before, journal.of_state(state_after))
        direct.apply_tree_change(change, TreeCheck(root, check, record))
        ...
        run.counts["unchanged"] += 1
    # the run ends "ok", or "interrupted"/"failed" when the block raised;
    # run.finish(status) first to say otherwise.

A command writing through its own transaction calls ``run.record`` on that
transaction's connection instead: the rule is only that the entry is
written on the connection of the transaction that makes the change.
"""

from __future__ import annotations

import collections
import contextlib
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from nova_reshape.journal import store
from nova_reshape.journal.snapshot import Snapshot
from placement_wsgi.db.preflight import masked_url

#: Options whose value is never written to the journal.
SECRET_OPTIONS = ("--token", "--header")


def command_line(argv: Sequence[str]) -> str:
    """``argv`` as one shell line, tokens and headers hidden, URL passwords masked."""
    shown, hide = [], False
    for word in argv:
        if hide:
            shown.append("***")
        elif "://" in word:
            shown.append(masked_url(word))
        else:
            shown.append(word)
        hide = word in SECRET_OPTIONS
    return shlex.join(shown)


class Recorder:
    """One journaled run in progress: its id, its node entries, its counts."""

    def __init__(self, engine: Engine, run_id: str) -> None:
        self.engine = engine
        self.run_id = run_id
        #: Nodes by outcome, written to the run when it finishes.
        self.counts: collections.Counter[str] = collections.Counter()
        self.finished = False

    def record(self, connection: Connection, nodename: str, host: str | None,
               before: Snapshot, after: Snapshot) -> int:
        """Journal one node's change on ``connection``, in the change's transaction;
        the entry's id (for :meth:`record_again`)."""
        return store.record_node(connection, self.run_id, nodename, host, before, after)

    def record_again(self, connection: Connection, entry_id: int, after: Snapshot) -> None:
        """Journal a further change of a node this run already recorded (entry
        ``entry_id``), on that change's ``connection``: the entry takes ``after``."""
        store.update_node(connection, entry_id, after)

    def record_all(self, connection: Connection, nodes: Sequence[store.Change],
                   again: Mapping[int, Snapshot] | None = None) -> list[int]:
        """:meth:`record` each change of ``nodes`` and :meth:`record_again` each entry
        id -> after of ``again``, one statement each, on the change's ``connection``
        (in its transaction); the new entries' ids, in order."""
        store.update_nodes(connection, again or {})
        return store.record_nodes(connection, self.run_id, nodes)

    def finish(self, status: store.RunStatus, counts: Mapping[str, int] | None = None) -> None:
        """Record how the run ended (``counts`` replace :attr:`counts` when given).

        Raises what the database raises (then the run stays ``running``; its
        entries are exact all the same)."""
        if counts is not None:
            self.counts = collections.Counter(counts)
        self.finished = True  # tried once: a failure here is not retried by recording()
        store.finish_run(self.engine, self.run_id, status, self.counts)


@contextlib.contextmanager
def recording(engine: Engine, command: str, line: str, inputs: Mapping[str, Any], *,
              reverts: str | None = None,
              custom_names: Mapping[str, list[str]] | None = None) -> Iterator[Recorder]:
    """A run recorded from start to end (see the module docstring); ``custom_names``:
    see :func:`~nova_reshape.journal.store.start_run`."""
    recorder = Recorder(engine, store.start_run(engine, command, line, inputs, reverts,
                                                custom_names))
    try:
        yield recorder
    except KeyboardInterrupt:
        if not recorder.finished:
            # The interruption is what the caller must see: a database that cannot
            # take this last write (the interrupted transaction's lock not yet
            # released, say) leaves the run "running", its entries exact.
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                recorder.finish(store.RunStatus.INTERRUPTED)
        raise
    except BaseException:
        if not recorder.finished:
            recorder.finish(store.RunStatus.FAILED)
        raise
    if not recorder.finished:
        recorder.finish(store.RunStatus.OK)
