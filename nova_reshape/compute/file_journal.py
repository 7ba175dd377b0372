"""The migration over HTTP, journaled node by node in a journal file.

Kept apart from the writers (:mod:`~nova_reshape.compute.writers`), around
them: :func:`writer_for` is the run's writer, the one
:func:`~nova_reshape.compute.writers.writer_for` chooses, wrapped by
:class:`FileJournalWriter` when the run goes over HTTP with a journal file
(:class:`~nova_reshape.compute.writers.NodeJournal` naming one). Per node
(:mod:`~nova_reshape.journal.journal_file`):

1. before the node's first request: the intent, its tree as planned from
   and as planned (a node written again after a conflict replaces it);
2. once its batch is read back and checked: the outcome, its "after" as
   read back (the read-back's tree and in-tree allocations, plus the whole
   body of each consumer the plan moved: ``GET /allocations/{consumer}``
   each, the only requests the journal adds, counted in the node's calls).
   A node whose check found violations is journaled as read back all the
   same: it was written. When the read-back was the tree's listing alone
   (every provider at a generation the node's writes explain), the outcome
   vouches for the node (:mod:`~nova_reshape.journal.vouched`): a later run
   with the same file takes its inventories and traits from it while the
   listing shows those generations.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from nova_reshape.compute import writers
from nova_reshape.compute.readback import WrittenTree, explains, listing_of
from nova_reshape.compute.readers import NodeReader
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.journal import journal_file
from nova_reshape.journal.http_io import whole_consumers
from nova_reshape.journal.snapshot import Snapshot, of_tree
from nova_reshape.transport.base import Placement
from nova_reshape.transport.counting import CountingTransport
from nova_reshape.transport.direct import on_database
from nova_reshape.transport.http import service_url


class ReadBackKeeper:
    """A reader passing everything on to ``reader``, keeping the states its read-back
    hands on (root -> state) for the journal's outcome, and the roots whose
    read-back was their tree's listing alone (:func:`~nova_reshape.compute.
    readback.explains`): the outcomes that vouch for their node."""

    def __init__(self, reader: NodeReader) -> None:
        self.reader = reader
        self.read_backs: dict[str, NodeState] = {}
        self.explained: set[str] = set()

    def begin(self, trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        self.reader.begin(trees)

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        return self.reader.read(names)

    def again(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        return self.reader.again(names)

    def keep(self, state: NodeState) -> None:
        self.reader.keep(state)

    def complete(self, state: NodeState, consumers: Collection[str]) -> NodeState:
        return self.reader.complete(state, consumers)

    def read_back(self, names: Mapping[str, str],
                  written: Mapping[str, WrittenTree]) -> Iterator[NodeState]:
        for state in self.reader.read_back(names, written):
            self.read_backs[state.root] = state
            if explains(written[state.root], listing_of(state.tree, state.root)):
                self.explained.add(state.root)
            yield state


class FileJournalWriter:
    """``inner`` (the request sequence, read back through ``keeper``) with each node's
    intent and outcome journaled in the file of ``journal`` (module docstring)."""

    def __init__(self, inner: writers.NodeWriter, keeper: ReadBackKeeper,
                 placement: CountingTransport, journal: writers.NodeJournal) -> None:
        assert journal.file is not None
        self.inner = inner
        self.keeper = keeper
        self.placement = placement
        self.journal = journal
        self.engine = journal.file
        #: The service written to: the one the outcomes vouch in.
        self.service = service_url(placement)
        self._before: dict[str, Snapshot] = {}

    #: Each node gets its intent before its own requests: one at a time.
    group_size = 1

    def write_together(self, nodes: Sequence[writers.WrittenNode]) -> bool:
        return False

    def write(self, node: writers.WrittenNode) -> None:
        simulation = node.simulation
        before = of_tree(simulation.tree_before, node.root, simulation.allocations_before)
        planned = of_tree(simulation.tree_after, node.root, simulation.allocations_after)
        journal_file.record_intent(self.engine, self.journal.run_id, node.nodename,
                                   self.journal.hosts.get(node.nodename), before, planned)
        self._before[node.root] = before
        self.inner.write(node)

    def checked(self) -> list[writers.Checked]:
        return self._outcomes(self.inner.checked())

    def end_batch(self) -> list[writers.Checked]:
        return self._outcomes(self.inner.end_batch())

    def _outcomes(self, checked: list[writers.Checked]) -> list[writers.Checked]:
        for item in checked:
            node = item.node
            before = self._before.pop(node.root)
            start = self.placement.calls
            state = self.keeper.complete(self.keeper.read_backs.pop(node.root),
                                         whole_consumers(before))
            node.result.calls += self.placement.calls - start
            explained = node.root in self.keeper.explained
            self.keeper.explained.discard(node.root)
            journal_file.record_outcome(
                self.engine, self.journal.run_id, node.nodename,
                self.journal.hosts.get(node.nodename), before,
                of_tree(state.tree, node.root, state.allocations),
                vouched_in=self.service if explained else None)
        return checked


def open_journal_file(placement: Placement, path: str | None) -> Engine | None:
    """The engine of the journal file at ``path``, opened once for a run over HTTP
    (None in-process on the database, or without a file): the run's reader looks
    up what it vouches for and its writer journals the nodes, both on it. Opened
    and kept for the run's life (per process in a parallel run); the command
    checked the path before (:func:`~nova_reshape.cmd.journaled.journal_path`)."""
    if path is None or on_database(placement) is not None:
        return None
    return journal_file.open_journal(path, create=True)


def writer_for(placement: CountingTransport, reader: NodeReader,
               journal: writers.NodeJournal | None = None) -> writers.NodeWriter:
    """The run's writer (:func:`~nova_reshape.compute.writers.writer_for`), journaled in
    the journal file of ``journal.file`` when it has one and the run is over HTTP."""
    if journal is None or journal.file is None or on_database(placement) is not None:
        return writers.writer_for(placement, reader, journal)
    keeper = ReadBackKeeper(reader)
    return FileJournalWriter(writers.writer_for(placement, keeper, None), keeper, placement,
                             journal)
