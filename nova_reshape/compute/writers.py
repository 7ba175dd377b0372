"""How a migration run writes each node's plan and checks it: two writers, one protocol.

Each written node is checked against the invariants and its plan
(:func:`nova_reshape.compute.readback.violations`). When that check can run
is what tells the writers apart:

* :class:`InTransactionWriter`, in-process on the database: the plan is one
  call, one database transaction
  (:func:`~nova_reshape.compute.execute.write_in_transaction`), and the
  check runs inside it, on the tree as the write leaves it, before commit.
  A write that breaks the invariants is rolled back and raises
  :class:`~nova_reshape.compute.invariants.InvariantsBroken`; a write that
  returns is checked already, so nothing is read back. Up to
  :attr:`~InTransactionWriter.group_size` nodes may also be written together
  in ONE transaction (:meth:`~InTransactionWriter.write_together`), each
  checked and journaled in it: the statements a node's write needs are then
  shared by the group, the journal's entries inserted in one statement. If
  anything of it fails nothing is written, and the run writes those nodes one
  by one, which says which node failed and why
  (:func:`~placement_wsgi.objects.tree_change.applied_together`).
* :class:`ReadBackWriter`, over HTTP (or any transport that only passes
  requests on): the plan is the sequence of API requests
  (:class:`~nova_reshape.compute.execute.RestPlanWriter`); the nodes written
  in a batch are read back once the batch is written and checked then
  (:meth:`~nova_reshape.compute.readers.NodeReader.read_back`: over the API
  the tree's listing, which is the whole read-back when it shows only the
  generations the node's writes answered
  (:func:`~nova_reshape.compute.readback.as_listed`), else each provider's
  inventories and allocations too; the traits and aggregates written were
  checked against each PUT's answer). The read-back's requests are counted
  in the node's ``calls``.

:func:`writer_for` chooses once, where the run is set up, by the one rule
for "in-process on the database",
:func:`~nova_reshape.transport.direct.on_database`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol

from sqlalchemy.engine import Connection, Engine

from nova_reshape.compute import invariants, preflight, readback
from nova_reshape.compute.execute import (
    RestPlanWriter,
    generations_of,
    tree_change,
    write_in_transaction,
)
from nova_reshape.compute.node_result import NodeResult
from nova_reshape.compute.readers import NodeReader, counted
from nova_reshape.compute.tree_source import NodeState, node_state
from nova_reshape.journal import Change, GroupEntries, of_state, of_tree, record_node
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport.counting import CountingTransport
from nova_reshape.transport.direct import on_database
from placement_wsgi.objects import tree_change as tree_change_obj
from placement_wsgi.objects.tree_change import (
    GROUP_SIZE,
    TRANSACTIONS_PER_BATCH,  # noqa: F401 - re-exported: the least transactions per batch
    TreeCheck,
    applied_together,
)
from placement_wsgi.objects.tree_state import TreeState

# GROUP_SIZE (nodes an in-process run writes in one transaction when it can,
# :meth:`InTransactionWriter.write_together`) and TRANSACTIONS_PER_BATCH (the
# least number of transactions per batch) are the tree change's rule, shared
# with the revert.


class WrittenNode(NamedTuple):
    """A node to write: its plan (``simulation.plan``, made from its state as
    read) and the result the run completes once the node is checked."""

    nodename: str
    root: str
    simulation: preflight.Simulation
    result: NodeResult


class Checked(NamedTuple):
    """A written node and what its check found, on ``tree`` as written."""

    node: WrittenNode
    violations: list[invariants.Violation]
    tree: ProviderTree


class NodeWriter(Protocol):
    """Writes nodes' plans; hands back each written node once it is checked."""

    #: How many nodes :meth:`write_together` may take (1: the writer writes one at a time).
    group_size: int

    def write_together(self, nodes: Sequence[WrittenNode]) -> bool:
        """Write ``nodes`` (each with a plan to write) all or none, checked; False
        when none was written (write them one by one)."""
        ...

    def write(self, node: WrittenNode) -> None:
        """Write the node's plan (never an empty one).

        Raises :class:`~nova_reshape.exception.PlacementReshapeConflict` or
        :class:`~nova_reshape.exception.ResourceProviderUpdateConflict` on a
        generation conflict (the run reads, plans and writes again),
        :class:`~nova_reshape.compute.invariants.InvariantsBroken` when the
        write was checked before commit and rolled back, another exception
        for any other failure.
        """
        ...

    def checked(self) -> list[Checked]:
        """The written nodes whose check is known by now, each handed back once."""
        ...

    def end_batch(self) -> list[Checked]:
        """Every written node not handed back yet, checked (the batch is written)."""
        ...


def _violations(node: WrittenNode, state: NodeState) -> list[invariants.Violation]:
    return readback.violations(node.nodename, node.simulation, node.simulation.moves, state)


class NodeJournal(NamedTuple):
    """Where a run journals its nodes: its run id (:mod:`nova_reshape.journal`),
    each node's host (node name -> host name) and, over HTTP, the journal file's
    engine, open for the run (:func:`~nova_reshape.compute.file_journal.
    open_journal_file`; None: the Placement database)."""

    run_id: str
    hosts: Mapping[str, str]
    file: Engine | None = None


class InTransactionWriter:
    """In-process on the database: one transaction per node, checked before commit.

    With a ``journal``, each node's entry (its tree as planned from and as
    written: the "after" is the check's own read of the tree in the
    transaction, not another read) is written in the node's transaction, after
    the check; a group's entries in one statement.
    """

    def __init__(self, placement: CountingTransport, journal: NodeJournal | None = None,
                 ) -> None:
        self.placement = placement
        self.journal = journal
        self._checked: list[Checked] = []

    def _recorder(self, node: WrittenNode, group: GroupEntries | None = None, index: int = 0,
                  ) -> Callable[[Connection, TreeState], None] | None:
        """What journals ``node`` in its transaction: alone, or as the ``index``-th
        of ``group``."""
        journal = self.journal
        if journal is None:
            return None
        simulation = node.simulation
        before = of_tree(simulation.tree_before, node.root, simulation.allocations_before)

        def record(connection: Connection, state: TreeState) -> None:
            change = Change(node.nodename, journal.hosts.get(node.nodename), before,
                            of_state(state))
            if group is None:
                record_node(connection, journal.run_id, *change)
            else:
                group.record(connection, index, change)

        return record

    def write(self, node: WrittenNode) -> None:
        seen: list[NodeState] = []

        def check(state: NodeState) -> None:
            found = _violations(node, state)
            if found:
                raise invariants.InvariantsBroken(found)
            seen.append(state)

        simulation = node.simulation
        write_in_transaction(self.placement, simulation.plan, simulation.tree_before,
                             simulation.allocations_before, check, self._recorder(node))
        # A transaction run again (a deadlock) checks again: the last check is the one committed.
        self._checked.append(Checked(node, [], seen[-1].tree))

    group_size = GROUP_SIZE

    def write_together(self, nodes: Sequence[WrittenNode]) -> bool:
        """Write ``nodes`` in ONE transaction
        (:meth:`~nova_reshape.transport.base.TreeWriter.apply_tree_changes`), each
        checked inside it as :meth:`write` checks one and journaled in it, before
        commit. True: all written and checked (:meth:`checked` hands them back).
        False: nothing written, because their changes share a provider or a
        consumer or because anything failed (a conflict, a violation, any error):
        the caller writes them one by one, which tells which node and why.
        """
        seen: dict[str, list[NodeState]] = {node.root: [] for node in nodes}
        group = None if self.journal is None else GroupEntries(self.journal.run_id, len(nodes))
        changes, checks = [], []
        for index, node in enumerate(nodes):
            plan = node.simulation.plan
            changes.append(tree_change(plan, generations_of(plan, node.simulation.tree_before),
                                       node.simulation.allocations_before))
            checks.append(TreeCheck(node.root, self._inspector(node, seen[node.root]),
                                    self._recorder(node, group, index)))
        if not applied_together(self.placement.apply_tree_changes, changes, checks):
            return False
        # A transaction run again (a deadlock) checks again: the last check is the one committed.
        self._checked += [Checked(node, [], seen[node.root][-1].tree) for node in nodes]
        return True

    @staticmethod
    def _inspector(node: WrittenNode, seen: list[NodeState]) -> Callable[[TreeState], None]:
        def inspect(state: TreeState) -> None:
            written = node_state(state)
            found = _violations(node, written)
            if found:
                raise invariants.InvariantsBroken(found)
            seen.append(written)

        return inspect

    def checked(self) -> list[Checked]:
        checked, self._checked = self._checked, []
        return checked

    def end_batch(self) -> list[Checked]:
        return self.checked()


class ReadBackWriter:
    """Over the API: the request sequence per node; the batch's nodes read back after it."""

    def __init__(self, placement: CountingTransport, reader: NodeReader) -> None:
        self.placement = placement
        self.rest = RestPlanWriter(placement)
        self.reader = reader
        self._written: list[tuple[WrittenNode, readback.WrittenTree]] = []

    def write(self, node: WrittenNode) -> None:
        simulation = node.simulation
        generations = self.rest.write(simulation.plan, simulation.tree_before,
                                      simulation.allocations_before)
        self._written.append((node, readback.WrittenTree(
            node.nodename, simulation.tree_after, simulation.allocations_after,
            generations.answered, generations.reshaped)))

    group_size = 1

    def write_together(self, nodes: Sequence[WrittenNode]) -> bool:
        return False  # the request sequence is one node at a time

    def checked(self) -> list[Checked]:
        return []

    def end_batch(self) -> list[Checked]:
        written, self._written = self._written, []
        if not written:
            return []
        by_root = {node.root: node for node, _tree in written}
        states = {}
        for state, calls in counted(self.placement, self.reader.read_back(
                {root: node.nodename for root, node in by_root.items()},
                {node.root: tree for node, tree in written})):
            states[state.root] = state
            by_root[state.root].result.calls += calls  # the read-back is the node's too
        return [Checked(node, _violations(node, states[node.root]), states[node.root].tree)
                for node, _tree in written]


def group_size(writer: NodeWriter, batch: int) -> int:
    """Nodes per transaction in a batch of ``batch`` nodes: the writer's group, in at
    least :data:`TRANSACTIONS_PER_BATCH` transactions
    (:func:`~placement_wsgi.objects.tree_change.group_size`)."""
    return tree_change_obj.group_size(batch, writer.group_size)


def writer_for(placement: CountingTransport, reader: NodeReader,
               journal: NodeJournal | None = None) -> NodeWriter:
    """The run's writer: in one transaction per node when ``placement`` is
    in-process on the database (journaling each node in its transaction when
    ``journal`` says where), else the request sequence read back through
    ``reader`` (not journaled)."""
    if on_database(placement) is not None:
        return InTransactionWriter(placement, journal)
    return ReadBackWriter(placement, reader)
