"""The offline ``migrate_compute_inventory`` run.

For every non-ironic node of the described hosts, the run does what
nova-compute does at start-up on the new release: the resource tracker's
update with ``startup=True``, whose driver (the shims composed by
:class:`~nova_reshape.virt.described.DescribedDriver`) raises
``ReshapeNeeded`` while the node is in the flat shape and then moves
inventory and allocations in one ``POST /reshaper``.

It goes in two phases:

1. **Read and check** every node (nothing written), a batch at a time:
   find its root provider (:mod:`~nova_reshape.compute.provider_listing`),
   read its tree and allocations (:mod:`~nova_reshape.compute.readers`),
   run the pre-flight (:mod:`nova_reshape.compute.preflight`), which
   simulates the reshape on copies and yields the node's plan. Any finding
   stops the run here. Each node is reduced to its compact result
   (:class:`~nova_reshape.compute.node_result.NodeResult`) and its checked
   plan, spooled to disk: memory does not grow with the number of nodes.
2. **Write** in batches (:attr:`Settings.batch_size` nodes): the batch's
   nodes are read again; a node read as its check read it is written with
   its checked plan (:mod:`~nova_reshape.compute.checked_plan`), any other
   is planned again (one that no longer passes the check fails); nothing
   for an unchanged node (:mod:`nova_reshape.compute.execute`); in-process
   several at a time in one transaction when they can be. After a
   generation conflict the node is read, planned and written again, as
   nova's resource tracker retries. Each written node is checked against
   the invariants and its plan by the run's writer
   (:mod:`nova_reshape.compute.writers`): in-process inside its write's
   transaction, before commit (a write that breaks them is rolled back and
   the run stops at that node); over the API after its batch. A failed
   node stops the run at once.

In-process a run killed at any moment leaves every node either untouched
or fully written; over the API a node may be left with empty new children
or providers still to delete, which the next run completes. Running again
is always safe; on a migrated deployment it writes nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection, Iterable, Sequence

from nova_reshape import exception
from nova_reshape.compute import invariants, preflight, stream, writers
from nova_reshape.compute.checked_plan import CheckedPlan, checked_plan, still_valid
from nova_reshape.compute.file_journal import open_journal_file, writer_for
from nova_reshape.compute.node_result import (
    CONFLICT,
    FAILED,
    INVARIANT,
    MIGRATED,
    NOT_RUN,
    REFUSED,
    SKIPPED,
    STOPPING,
    UNCHANGED,
    UPDATED,
    WOULD_MIGRATE,
    WOULD_UPDATE,
    Finished,
    NodeResult,
    NodeStatus,
    Show,
    summarize,
)
from nova_reshape.compute.provider_listing import listing_for
from nova_reshape.compute.readers import check_read, read_again, reader_for
from nova_reshape.compute.resource_tracker import CONFLICT_ATTEMPTS
from nova_reshape.compute.run_settings import Settings
from nova_reshape.compute.spool import Spool
from nova_reshape.compute.stream import Numbered, numbered_hosts, with_nova_conf
from nova_reshape.compute.tree_source import BulkReader, NodeState
from nova_reshape.compute.writers import Checked, NodeJournal, WrittenNode
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.transport.base import Placement
from nova_reshape.transport.counting import CountingTransport as CountingPlacement
from nova_reshape.virt.described import DescribedDriver, shims_for
from nova_reshape.virt.host import Host, Node
from placement_wsgi.cmd import signals

LOG = logging.getLogger(__name__)

#: The run, and the per-node records re-exported from :mod:`~nova_reshape.compute.node_result`.
__all__ = [
    "Migration", "Settings", "Progress", "NodeStatus", "SKIPPED", "UNCHANGED", "MIGRATED",
    "UPDATED", "WOULD_MIGRATE", "WOULD_UPDATE", "REFUSED", "NOT_RUN", "CONFLICT", "FAILED",
    "INVARIANT", "STOPPING", "NodeResult", "Show", "Finished", "summarize", "Numbered",
    "numbered_hosts", "with_nova_conf"]

#: A generation conflict: the node is read, planned and written again.
_CONFLICTS = (exception.PlacementReshapeConflict, exception.ResourceProviderUpdateConflict)


@dataclasses.dataclass
class _Prepared:
    """A checked node waiting for the write phase (no tree as read kept: spooled)."""

    node: Node
    root: str
    result: NodeResult
    #: Whether the check planned any write (else the node is unchanged, no call).
    changes: bool
    #: The plan as checked, written as is when the read before the write shows the same.
    checked: CheckedPlan | None = None
    #: The plan last made for the write; set in the write phase, for the node being written.
    simulation: preflight.Simulation | None = None


Progress = Callable[[str, int, int], None]


class Migration:
    """One ``migrate_compute_inventory`` run over ``hosts`` through ``placement``.

    ``placement``: a transport (``open_direct``'s, or
    :func:`~nova_reshape.transport.http_placement`'s). ``settings``:
    see :class:`Settings`. ``only``: the node names this run handles (one
    worker's share of a parallel run; default all). ``progress`` is called
    as ``progress(phase, done, total)``; ``finished`` with each node's
    result once it is final. ``bulk`` reads trees in batches from the
    database (default: ``placement`` itself when it is in-process on it).

    ``hosts`` may be a lazy iterable: it is consumed once, a batch of nodes
    at a time, and no described node is held beyond its batch (between the
    phases the checked nodes wait in a :class:`~nova_reshape.compute.spool.Spool`
    on disk). ``numbered`` replaces ``hosts`` when the positions of the nodes
    in the whole description order are given (a parallel worker's share).
    With ``keep_results=False`` the results only go to ``finished`` (nothing
    per node is kept); ``expected`` is how many nodes to check, for the
    progress total, as far as known beforehand. The reader and the writer are
    chosen here, once (:func:`~nova_reshape.compute.readers.reader_for`,
    :func:`~nova_reshape.compute.writers.writer_for`).
    """

    def __init__(self, placement: Placement, hosts: Iterable[Host],
                 settings: Settings = Settings(), *, only: Collection[str] | None = None,
                 progress: Progress | None = None, finished: Finished | None = None,
                 bulk: BulkReader | None = None, numbered: Iterable[stream.Numbered] | None = None,
                 keep_results: bool = True, expected: int = 0) -> None:
        self.placement = CountingPlacement(placement)
        #: The hosts with their first node's position; consumed once, a batch at a time.
        self.numbered = numbered if numbered is not None else stream.numbered_hosts(hosts)
        self.only = only
        self.settings = settings
        self.options = settings.options
        self._spool: Spool[_Prepared] = Spool()
        self.progress = progress or (lambda phase, done, total: None)
        self.finished = finished or (lambda result: None)
        #: Composes the shims; holds the nodes of the batch being checked or written.
        self.driver = DescribedDriver({}, shims_for(self.options), self.options)
        #: Every node's final result, when ``keep_results`` (else only passed to ``finished``).
        self.results: list[NodeResult] | None = [] if keep_results else None
        self._refused = False
        #: How many nodes to check, as far as known (the described nodes arrive as a stream).
        self.expected = expected
        journal_engine = open_journal_file(self.placement, settings.journal_file)
        #: Reads trees and allocations (in bulk on the database, else per node).
        self.reader = reader_for(self.placement, bulk, settings.batch_size,  # shown: every
                                 settings.show is not None, journal_engine)  # usage
        #: Where each node's root and the providers its check looks up are found.
        self.listing = listing_for(self.placement, bulk)
        #: Each checked node's host (node name -> host name), for the journal.
        self._hosts: dict[str, str] = {}
        self.writer = writer_for(self.placement, self.reader, None if settings.journal is None
                                 else NodeJournal(settings.journal, self._hosts,
                                                  journal_engine))
        self._done = 0
        self._calls_seen = 0

    def _finish(self, result: NodeResult) -> None:
        if result.status == REFUSED:
            self._refused = True
        if self.results is not None:
            self.results.append(result)
        self.finished(result)

    def _show(self, result: NodeResult, simulation: preflight.Simulation | None,
              tree_after: ProviderTree | None = None) -> None:
        show = self.settings.show
        if show is not None and simulation is not None:
            result.detail = show(result, simulation, tree_after)

    def _read_batch(self, items: Sequence[_Prepared]) -> dict[str, NodeState]:
        """root -> state of the nodes of ``items`` as Placement holds them now."""
        names = {item.root: item.node.nodename for item in items}
        return {state.root: state for state in self.reader.read(names)}

    def _read_again(self, items: Sequence[_Prepared]) -> dict[str, NodeState]:
        """As :meth:`_read_batch`, before the batch's write (see :func:`read_again`)."""
        return read_again(self.placement, self.reader,
                          {item.root: (item.node.nodename, item.result) for item in items})

    # -- phase 1 -----------------------------------------------------------------

    def _prepare(self, node: stream.Checking, root: str, state: NodeState,
                 listing: preflight.Listing) -> _Prepared | None:
        """Pre-flight and plan one node from its tree and allocations as read."""
        result = node.result
        result.root = root
        start = self.placement.calls
        state, findings, simulation = check_read(self.reader, node.node, self.driver, state,
                                                 listing)
        result.calls += self.placement.calls - start
        findings = node.conf_findings + findings
        result.findings = findings
        if findings or simulation is None:
            self._show(result, simulation)
            self._finish(result)
            return None
        node_plan = simulation.plan
        result.status = (WOULD_MIGRATE if node_plan.reshape else UNCHANGED if node_plan.empty
                         else WOULD_UPDATE)
        result.moves = simulation.moves
        self._show(result, simulation)
        if node_plan.empty or self.settings.dry_run:
            return _Prepared(node.node, root, result, changes=False)
        self.reader.keep(state)  # over the API: written as read unless it moved
        return _Prepared(node.node, root, result, changes=True,
                         checked=checked_plan(simulation, state))

    # -- phase 2 -----------------------------------------------------------------

    def _plan_again(self, prepared: _Prepared, state: NodeState,
                    when: str) -> preflight.Simulation:
        """The node planned again from ``state``; NovaException if it no longer passes."""
        _state, findings, fresh = check_read(self.reader, prepared.node, self.driver, state)
        if findings or fresh is None:
            raise exception.NovaException(
                message=f"{when} the node no longer passes the check: "
                        + "; ".join(str(finding) for finding in findings))
        prepared.simulation = fresh
        return fresh

    def _plan_for_write(self, prepared: _Prepared, state: NodeState) -> preflight.Simulation:
        """The checked plan when ``state`` shows what the check read (see
        :mod:`~nova_reshape.compute.checked_plan`), else planned again."""
        kept = None if prepared.checked is None else still_valid(prepared.checked, state)
        if kept is None:
            return self._plan_again(prepared, state, "read again before its write,")
        prepared.simulation = kept
        return kept

    def _write(self, prepared: _Prepared, state: NodeState | None) -> None:
        """Plan the node again from ``state`` (read just before) and write it.

        A node written is final once the writer hands it back checked
        (:meth:`_settle`); any other outcome is final here.
        """
        result = prepared.result
        if not prepared.changes:
            result.status = UNCHANGED  # nothing to write: no call at all
            self._finish(result)
            return
        start, writes = self.placement.calls, self.placement.writes
        try:
            if state is None:
                raise exception.NovaException(message="the node could not be read again")
            simulation = self._plan_for_write(prepared, state)
            if not simulation.plan.empty:
                simulation = self._execute(prepared, simulation)
            if simulation.plan.empty:  # done meanwhile: by another writer, or by our own
                result.status, result.moves = UNCHANGED, []  # write whose answer was lost
                result.calls += self.placement.calls - start
                result.writes = self.placement.writes - writes
                self._show(result, simulation)
                self._finish(result)
                return
        except invariants.InvariantsBroken as error:
            result.status, result.violations = INVARIANT, error.violations
            result.error = ("the write broke the invariants and was rolled back: nothing of "
                            "this node was written")
        except _CONFLICTS as error:
            result.status, result.error = CONFLICT, str(error)
        except Exception as error:  # noqa: BLE001 - reported per node, run stops
            LOG.debug("node %s failed", prepared.node.nodename, exc_info=True)
            result.status, result.error = FAILED, f"{type(error).__name__}: {error}"
        else:
            result.status = MIGRATED if simulation.reshape else UPDATED
            result.moves = list(simulation.moves)
        result.calls += self.placement.calls - start
        result.writes = self.placement.writes - writes
        last_planned, prepared.simulation = prepared.simulation, None
        if result.status in (MIGRATED, UPDATED):
            self._settle(self.writer.checked())
            return
        self._show(result, last_planned)
        self._finish(result)

    def _execute(self, prepared: _Prepared,
                 simulation: preflight.Simulation) -> preflight.Simulation:
        """Write the node's plan; after a generation conflict read, plan and write
        again from what Placement holds, as nova's resource tracker does, up to
        :data:`CONFLICT_ATTEMPTS` times (the last conflict reaches the caller).
        The simulation that was written, or an empty one when the node read
        again after a conflict is already in its new shape (another writer,
        or this run's own write whose answer was lost): nothing is written
        twice."""
        for attempt in range(1, CONFLICT_ATTEMPTS):
            try:
                self.writer.write(self._written(prepared, simulation))
                return simulation
            except _CONFLICTS as error:
                LOG.info("Conflict writing node %s (attempt %d of %d), planning again "
                         "from fresh data: %s", prepared.node.nodename, attempt,
                         CONFLICT_ATTEMPTS, error)
            state = self._read_batch([prepared])[prepared.root]
            simulation = self._plan_again(prepared, state, "after a conflict")
            if simulation.plan.empty:
                return simulation
        self.writer.write(self._written(prepared, simulation))
        return simulation

    @staticmethod
    def _written(prepared: _Prepared, simulation: preflight.Simulation) -> WrittenNode:
        return WrittenNode(prepared.node.nodename, prepared.root, simulation, prepared.result)

    def _settle(self, checked: Iterable[Checked]) -> None:
        """Written nodes handed back checked by the writer: their results are final."""
        for node, violations, tree in checked:
            result = node.result
            result.violations = violations
            if violations:
                result.status = INVARIANT
            self._show(result, node.simulation, tree)
            self._finish(result)

    # -- the run -----------------------------------------------------------------

    @property
    def calls(self) -> int:
        """Placement requests made so far."""
        return self.placement.calls

    @property
    def pending(self) -> int:
        """Nodes checked and waiting to be written."""
        return len(self._spool)

    @property
    def refused(self) -> bool:
        """Whether the check found anything on any of this run's nodes."""
        return self._refused

    def run(self) -> list[NodeResult]:
        """Check every node, then (unless a dry run or refused) write them.

        Results come in the order the host descriptions give the nodes
        (none when the run was made with ``keep_results=False``: they went
        to ``finished`` only).
        """
        self.check()
        if self.refused:
            self.abandon()
        elif self.settings.dry_run:
            self.keep()
        else:
            self.write()
        return self.ordered_results()

    def ordered_results(self) -> list[NodeResult]:
        return sorted(self.results or (), key=lambda result: result.order)

    def check(self) -> None:
        """Phase 1: read and check every node; nothing is written.

        One listing resolves every node's root; the described nodes come from
        the stream a batch at a time, their trees read together (see
        :attr:`reader`), each planned, reduced to its compact result and
        spooled: no more than one batch of nodes and trees is held at once.
        """
        self.reader.begin(self.listing.begin())
        self._calls_seen = self.placement.calls
        self._done = 0
        for batch in stream.batches(self.numbered, self.only, self.options,
                                    self.settings.batch_size, skipped=self._finish):
            self._check_batch(batch)
        self.expected = self._done

    def _check_batch(self, batch: list[stream.Checking]) -> None:
        self._hold(item.node for item in batch)
        self._hosts.update((item.node.nodename, item.host) for item in batch if item.host)
        listing = self.listing.of_nodes([item.node for item in batch])
        by_root: dict[str, list[stream.Checking]] = {}
        for item in batch:
            root, findings = preflight.resolve_root(item.node, listing)
            if root is None:
                item.result.findings = findings
                self._finish(item.result)
                self._checked()
                continue
            by_root.setdefault(root, []).append(item)
        names = {root: items[0].node.nodename for root, items in by_root.items()}
        states: Iterable[NodeState] = self.reader.read(names)
        if self.listing.per_batch:  # the batch's lookups in one read: its states first
            states = list(states)
            listing = self.listing.for_check(listing, ((item.node, state) for state in states
                                                       for item in by_root[state.root]),
                                             self.driver)
        for state in states:
            self._prepare_all(by_root.pop(state.root), state, listing)
        self._hold(())

    def _hold(self, nodes: Iterable[Node]) -> None:
        """The driver's nodes: those of the batch at hand only."""
        self.driver.nodes.clear()
        self.driver.nodes.update((node.nodename, node) for node in nodes)

    def _prepare_all(self, nodes: list[stream.Checking], state: NodeState,
                     listing: preflight.Listing) -> None:
        for node in nodes:
            node.result.calls = self.placement.calls - self._calls_seen
            self._calls_seen = self.placement.calls
            item = self._prepare(node, state.root, state, listing)
            self._calls_seen = self.placement.calls
            if item is not None:
                self._spool.put(item)
            self._checked()

    def _checked(self) -> None:
        self._done += 1
        self.progress("check", self._done, max(self.expected, self._done))

    def abandon(self) -> None:
        """Give up the write (another node was refused): the checked nodes are not run."""
        self._not_run(self._spool.drain())

    def keep(self) -> None:
        """A dry run with nothing refused: the checked nodes' results are final as checked."""
        for item in self._spool.drain():
            self._finish(item.result)

    def _not_run(self, items: Iterable[_Prepared]) -> None:
        for item in items:
            item.result.status = NOT_RUN
            self._finish(item.result)

    def write(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Phase 2 (see the module docstring): the checked nodes, from the spool, in
        batches of :attr:`Settings.batch_size`. Stops after a node that failed or whose
        write broke an invariant (over the API: after its batch), or before the next
        node once ``stop()`` is true (another worker failed) or a signal came (raised
        once every node committed so far is reported); the nodes left are ``not-run``."""
        total, prepared, written_so_far = len(self._spool), self._spool.drain(), 0
        with signals.deferred() as signalled:
            stopping = lambda: stop() or bool(signalled)  # noqa: E731 - one test, named
            for batch in stream.chunked(prepared, self.settings.batch_size):
                self._hold(item.node for item in batch)
                handled = self._write_batch(batch, stopping, written_so_far, total)
                written_so_far += handled
                if handled < len(batch) or any(item.result.status in STOPPING
                                               for item in batch):
                    self._not_run(batch[handled:])
                    self._not_run(prepared)
                    break
            self._hold(())

    def _write_batch(self, batch: Sequence[_Prepared], stop: Callable[[], bool],
                     done: int, total: int) -> int:
        """Write ``batch`` (see :meth:`write`); how many of its nodes were handled."""
        states = self._read_again([item for item in batch if item.changes])
        handled, size, together = 0, writers.group_size(self.writer, len(batch)), set()
        for item in batch:
            if stop():
                break
            if handled % size == 0 and size > 1:
                together = self._write_together(batch[handled:handled + size], states)
            if item.root not in together:
                self._write(item, states.get(item.root))
            handled += 1
            self.progress("migrate", done + handled, total)
            if item.result.status in STOPPING:
                break
        states.clear()
        self._settle(self.writer.end_batch())
        return handled

    def _write_together(self, group: Sequence[_Prepared], states: dict[str, NodeState],
                        ) -> set[str]:
        """The roots of the group's nodes written in one transaction: those with
        something to write, planned again, if several and the writer takes them
        all; else none (each node is then written on its own, as :meth:`_write`)."""
        planned = []
        for item in (item for item in group if item.changes and item.root in states):
            try:
                fresh = self._plan_for_write(item, states[item.root])
            except exception.NovaException:  # no longer passes: written alone, which says so
                continue
            if not fresh.plan.empty:
                planned.append(self._written(item, fresh))
        written = len(planned) > 1 and self.writer.write_together(planned)
        for node in planned if len(planned) > 1 else ():  # one call each, written or not
            node.result.calls, node.result.writes = node.result.calls + 1, node.result.writes + 1
            if written:
                node.result.status = MIGRATED if node.simulation.reshape else UPDATED
                node.result.moves = list(node.simulation.moves)
        self._settle(self.writer.checked())
        return {node.root for node in planned} if written else set()
