"""``revert``: every node of a journaled run put back to its "before" state.

For each node entry of the run (those of ``hosts`` only, when named), in
the order they were written:

1. the node's tree and consumers are read as they are now (a bulk read per
   batch, :meth:`~placement_wsgi.direct.PlacementDirect.read_trees`);
2. compared with the run's "after" (consumer generations included,
   provider generations not): when they agree the node is put back; when
   they differ but agree with the "before" (a revert that already did this
   node, perhaps killed before it could say so) there is nothing to do;
   otherwise the node is **refused** with one line naming what changed, and
   the other nodes go on;
3. the change back (:func:`~nova_reshape.journal.plan.change_for`) is
   written in ONE transaction whose check, before commit, reads the node
   and requires it to equal the "before" (else it is rolled back:
   ``invariant``), and whose ``record`` journals the node in the same
   transaction for the revert's own run, so a revert is itself revertable
   and a killed one leaves an exact journal. Up to a group of nodes
   (:func:`~placement_wsgi.objects.tree_change.group_size`) share that
   transaction, as the migration's do
   (:meth:`~placement_wsgi.direct.PlacementDirect.apply_tree_changes`: one
   read of their trees, their entries in one statement); if anything of the
   group fails nothing of it is written and its nodes are written again one
   per transaction (:meth:`~placement_wsgi.direct.PlacementDirect.apply_tree_change`),
   which tells which node is refused and why.

A dry run does steps 1 and 2 and describes each change step 3 would write
(:func:`~nova_reshape.journal.plan.describe`); the real revert reports the
same description for what it wrote. After the nodes, the custom traits and
resource classes the reverted run created are deleted again where nothing
uses them any more (Placement's own delete rules decide).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection

from nova_reshape.journal import names, plan, store
from nova_reshape.journal.snapshot import Snapshot, differences, of_state
from placement_wsgi import errors
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import tree_change
from placement_wsgi.objects.allocation import consumer_views
from placement_wsgi.objects.tree_change import TreeChange, TreeCheck
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE, TreeState, consumer_body

#: Phrases of what changed named in a refusal's line before "and N more".
SHOWN_DIFFERENCES = 3


class RevertStatus(enum.StrEnum):
    """What happened to one node of the reverted run."""

    REVERTED = "reverted"
    WOULD_REVERT = "would-revert"
    ALREADY = "already-reverted"
    REFUSED = "refused"
    CONFLICT = "conflict"
    FAILED = "failed"
    INVARIANT = "invariant"


@dataclasses.dataclass
class NodeRevert:
    """One node's outcome: ``reason`` is the one line for a node not reverted;
    ``changes`` what was (or, in a dry run, would be) written; ``before`` and
    ``after`` the node as the revert found it and as it leaves it (or, in a dry
    run, would leave it), in outline (:func:`~nova_reshape.journal.plan.outline`;
    ``after`` empty when nothing is written)."""

    nodename: str
    host: str | None
    root: str
    status: RevertStatus
    reason: str = ""
    changes: dict[str, Any] = dataclasses.field(default_factory=dict)
    before: list[str] = dataclasses.field(default_factory=list)
    after: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"status": str(self.status)}


class NotRestored(Exception):
    """The change left the node other than its "before" (rolled back)."""


def one_line(found: list[str]) -> str:
    more = len(found) - SHOWN_DIFFERENCES
    return "; ".join(found[:SHOWN_DIFFERENCES]) + (f"; and {more} more" if more > 0 else "")


def selected(keys: Sequence[store.EntryKey], hosts: Sequence[str]) -> list[store.EntryKey]:
    """The entries of ``hosts`` (a host or node name each), or all when none is named."""
    if not hosts:
        return list(keys)
    wanted = set(hosts)
    return [key for key in keys if key.host in wanted or key.nodename in wanted]


class Reached(NamedTuple):
    """A node the revert has decided on: its outcome so far and, when it is to be
    written, the change back and the node as found (``current``)."""

    entry: store.NodeEntry
    result: NodeRevert
    current: Snapshot | None = None
    change: TreeChange | None = None


class Reverter:
    """Reverts node entries through ``direct`` (an open PlacementDirect).

    ``run_id``: the revert's own journaled run (None for a dry run, which
    writes nothing). ``progress(phase, done, total)`` after each node.
    ``stop()``: checked before each node; once true the revert returns what
    it did (the nodes not reached, or decided on but not written yet, are
    untouched). ``share``: how many nodes this reverter reverts in all, when
    :meth:`revert` gets them in parts (a worker's chunks); its group size
    follows from it.

    The nodes to write are written up to a group at a time in ONE transaction
    (:meth:`write_together`), as the migration writes them; a group that
    fails as a whole is written again one node per transaction
    (:meth:`write`), which says which node failed and why.
    """

    def __init__(self, direct: PlacementDirect, *, run_id: str | None,
                 progress: Callable[[str, int, int], None] | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE,
                 stop: Callable[[], bool] = lambda: False, share: int | None = None,
                 ) -> None:
        self.direct = direct
        self.run_id = run_id
        self.progress = progress or (lambda phase, done, total: None)
        self.batch_size = batch_size
        self.stop = stop
        self.share = share

    def group_size(self, count: int) -> int:
        """Nodes decided on before they are written together, of ``count`` given to
        :meth:`revert` (:func:`~placement_wsgi.objects.tree_change.group_size` of
        the reverter's share)."""
        return tree_change.group_size(self.share or count)

    def revert(self, keys: Sequence[store.EntryKey]) -> list[NodeRevert]:
        """Each entry's outcome, in the order of ``keys``; entries are read from the
        journal and nodes from Placement a batch at a time, written a group at a
        time."""
        results: list[NodeRevert] = []
        size = self.group_size(len(keys))
        for batch in self.batches(keys):
            now = self.read_now(batch)
            written: set[str] = set()  # consumers this batch's reverts write
            reached: list[Reached] = []
            for entry in batch:
                if self.stop():
                    return results
                if _known(entry) & written:  # a consumer in two nodes: read again, once
                    results += self.settle(reached, len(keys), len(results))  # written
                    reached = []
                    now.pop(entry.root, None)
                    now.update(self.read_now([entry]))
                decided = self.decide(entry, now.get(entry.root))
                written.update(decided.result.changes.get("allocations", {}))
                reached.append(decided)
                if len(reached) >= size:
                    results += self.settle(reached, len(keys), len(results))
                    reached = []
            results += self.settle(reached, len(keys), len(results))
        return results

    def batches(self, keys: Sequence[store.EntryKey]) -> Iterator[list[store.NodeEntry]]:
        """The entries of ``keys`` from the journal, a batch at a time."""
        return store.entries_of(self.direct.database.engine, keys, self.batch_size)

    def read_now(self, batch: Sequence[store.NodeEntry]) -> dict[str, Snapshot]:
        """root -> the node as Placement holds it now, with the consumers its entry
        knows that hold nothing in the tree (absent: the root is gone)."""
        states = {state.root: state
                  for state in self.direct.read_trees([e.root for e in batch], len(batch))}
        elsewhere = {consumer for entry in batch if entry.root in states
                     for consumer in _not_in_tree(entry, states[entry.root])}
        bodies = self.direct.database.read(_bodies, sorted(elsewhere)) if elsewhere else {}
        return {entry.root: of_state(states[entry.root],
                                     _outside(entry, states[entry.root], bodies))
                for entry in batch if entry.root in states}

    def decide(self, entry: store.NodeEntry, current: Snapshot | None) -> Reached:
        """Step 2: the node's outcome but for its write, and the change to write
        (none: refused, already back, or a dry run, whose outcome is final)."""
        result = NodeRevert(entry.nodename, entry.host, entry.root, RevertStatus.REFUSED)
        if current is None:
            if not entry.before.providers:  # the run created the node; it is gone again
                result.status = RevertStatus.ALREADY
                return Reached(entry, result)
            result.reason = f"root provider {entry.root} is gone"
            return Reached(entry, result)
        result.before = plan.outline(current)
        changed = differences(entry.after, current)
        if changed:
            if not differences(entry.before, current, consumer_generations=False):
                result.status = RevertStatus.ALREADY
            else:
                result.reason = "changed since the run: " + one_line(changed)
            return Reached(entry, result)
        try:
            change = plan.change_for(entry.before, current)
        except plan.CannotRevert as error:
            result.reason = str(error)
            return Reached(entry, result)
        result.changes = plan.describe(change)
        result.status, result.after = RevertStatus.WOULD_REVERT, plan.outline(entry.before)
        if self.run_id is None:
            return Reached(entry, result)
        return Reached(entry, result, current, change)

    def settle(self, reached: Sequence[Reached], total: int, done: int) -> list[NodeRevert]:
        """Step 3 for the nodes of ``reached`` to write: together when there are
        several and they can be, else one by one; the outcomes, in order (progress
        said for each, ``done`` of ``total`` before them)."""
        writes = [item for item in reached if item.change is not None]
        if not (len(writes) > 1 and self.write_together(writes)):
            for item in writes:
                assert item.current is not None and item.change is not None
                self._written(item.result, *self.write(item.entry, item.current, item.change))
        for position in range(1, len(reached) + 1):
            self.progress("revert", done + position, total)
        return [item.result for item in reached]

    @staticmethod
    def _written(result: NodeRevert, status: RevertStatus, reason: str) -> None:
        result.status, result.reason = status, reason
        if status is not RevertStatus.REVERTED:
            result.changes, result.after = {}, []

    def write_together(self, writes: Sequence[Reached]) -> bool:
        """Write every change of ``writes`` in ONE transaction, each node checked and
        journaled in it as :meth:`write` does one (the entries in one statement);
        False when nothing was written
        (:func:`~placement_wsgi.objects.tree_change.applied_together`)."""
        assert self.run_id is not None
        group = store.GroupEntries(self.run_id, len(writes))
        checks = []
        for index, item in enumerate(writes):
            assert item.current is not None
            checks.append(TreeCheck(item.entry.root, _no_inspection, _restorer(
                item.entry, item.current, group.recorder(index))))
        if not tree_change.applied_together(self.direct.apply_tree_changes,
                                            [item.change for item in writes], checks):
            return False
        for item in writes:
            self._written(item.result, RevertStatus.REVERTED, "")
        return True

    def write(self, entry: store.NodeEntry, current: Snapshot,
              change: Any) -> tuple[RevertStatus, str]:
        """Write ``change`` (``current`` -> ``entry.before``) alone; the status and
        reason."""
        assert self.run_id is not None
        run_id = self.run_id

        def record(connection: Connection, change: store.Change) -> None:
            store.record_node(connection, run_id, *change)

        try:
            self.direct.apply_tree_change(change, TreeCheck(
                entry.root, _no_inspection, _restorer(entry, current, record)))
        except NotRestored as error:
            return RevertStatus.INVARIANT, f"the write would not restore it, rolled back: {error}"
        except errors.ConcurrentUpdate as error:
            return RevertStatus.CONFLICT, f"written meanwhile ({error}); run the revert again"
        except errors.PlacementError as error:
            return RevertStatus.FAILED, f"Placement refused the change: {error}"
        return RevertStatus.REVERTED, ""


def _no_inspection(state: TreeState) -> None:
    """The restorer checks the node (it needs the transaction's connection)."""


def _restorer(entry: store.NodeEntry, current: Snapshot,
              record: Callable[[Connection, store.Change], None],
              ) -> Callable[[Connection, TreeState], None]:
    """The record step of ``entry``'s write, in its transaction: :class:`NotRestored`
    unless the node as written equals the "before" (rolled back), else ``record``
    journals the node (``current`` -> as written) on that connection."""

    def restored_and_recorded(connection: Connection, state: TreeState) -> None:
        # Checked here rather than in the TreeCheck's inspect: the consumers the
        # entry knows outside the tree are read on the transaction's connection.
        elsewhere = _not_in_tree(entry, state)
        now = of_state(state, _outside(entry, state, _bodies(connection, elsewhere)
                                       if elsewhere else {}))
        found = differences(entry.before, now, consumer_generations=False)
        if found:
            raise NotRestored(one_line(found))
        record(connection, store.Change(entry.nodename, entry.host, current, now))

    return restored_and_recorded


def _known(entry: store.NodeEntry) -> set[str]:
    """Every consumer the entry knows (in its tree before or after, or touched)."""
    return set(entry.before.allocations) | set(entry.after.allocations)


def _not_in_tree(entry: store.NodeEntry, state: TreeState) -> list[str]:
    """The consumers the entry knows that hold nothing in the tree now: the only ones
    whose whole body must be read (the tree's own come with the tree)."""
    return sorted(_known(entry) - set(state.allocations))


def _bodies(connection: Connection, consumers: list[str]) -> dict[str, dict[str, Any]]:
    """``GET /allocations/{consumer}`` at 1.28 of each of ``consumers`` holding anything."""
    return {uuid: consumer_body(view)
            for uuid, view in consumer_views(connection, consumers).items()}


def _outside(entry: store.NodeEntry, state: TreeState,
             bodies: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """The consumers the entry knows that hold nothing in the tree now, with what they
    hold elsewhere (None: nothing), so that they are compared and put back too."""
    return {consumer: bodies.get(consumer) for consumer in _not_in_tree(entry, state)}


def forget_names(database: Database, run: store.Run, dry_run: bool) -> list[str]:
    """The custom traits and classes ``run`` created that nothing uses now: deleted
    (unless ``dry_run``: the candidates); their names
    (:func:`~nova_reshape.journal.names.forget_unused`)."""
    return names.forget_unused(database, run.inputs.get(names.INPUT_KEY), dry_run=dry_run)
