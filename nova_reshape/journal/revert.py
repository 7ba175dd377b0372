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
   written in ONE transaction
   (:meth:`~placement_wsgi.direct.PlacementDirect.apply_tree_change`) whose
   check, before commit, reads the node and requires it to equal the
   "before" (else it is rolled back: ``invariant``), and whose ``record``
   journals the node in the same transaction for the revert's own run, so
   a revert is itself revertable and a killed one leaves an exact journal.

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
from typing import Any

from sqlalchemy.engine import Connection

from nova_reshape.journal import names, plan, store
from nova_reshape.journal.snapshot import Snapshot, differences, of_state
from placement_wsgi import errors
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects.allocation import consumer_views
from placement_wsgi.objects.tree_change import TreeCheck
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


class Reverter:
    """Reverts node entries through ``direct`` (an open PlacementDirect).

    ``run_id``: the revert's own journaled run (None for a dry run, which
    writes nothing). ``progress(phase, done, total)`` after each node.
    ``stop()``: checked before each node; once true the revert returns what
    it did (the nodes not reached are untouched).
    """

    def __init__(self, direct: PlacementDirect, *, run_id: str | None,
                 progress: Callable[[str, int, int], None] | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE,
                 stop: Callable[[], bool] = lambda: False) -> None:
        self.direct = direct
        self.run_id = run_id
        self.progress = progress or (lambda phase, done, total: None)
        self.batch_size = batch_size
        self.stop = stop

    def revert(self, keys: Sequence[store.EntryKey]) -> list[NodeRevert]:
        """Each entry's outcome, in the order of ``keys``; entries are read from the
        journal and nodes from Placement a batch at a time."""
        results: list[NodeRevert] = []
        for batch in self.batches(keys):
            now = self.read_now(batch)
            written: set[str] = set()  # consumers this batch's reverts wrote so far
            for entry in batch:
                if self.stop():
                    return results
                if _known(entry) & written:  # a consumer in two nodes: read again
                    now.pop(entry.root, None)
                    now.update(self.read_now([entry]))
                result = self.node(entry, now.get(entry.root))
                written.update(result.changes.get("allocations", {}))
                results.append(result)
                self.progress("revert", len(results), len(keys))
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

    def node(self, entry: store.NodeEntry, current: Snapshot | None) -> NodeRevert:
        """One node's outcome (steps 2 and 3 of the module docstring)."""
        result = NodeRevert(entry.nodename, entry.host, entry.root, RevertStatus.REFUSED)
        if current is None:
            if not entry.before.providers:  # the run created the node; it is gone again
                result.status = RevertStatus.ALREADY
                return result
            result.reason = f"root provider {entry.root} is gone"
            return result
        result.before = plan.outline(current)
        changed = differences(entry.after, current)
        if changed:
            if not differences(entry.before, current, consumer_generations=False):
                result.status = RevertStatus.ALREADY
            else:
                result.reason = "changed since the run: " + one_line(changed)
            return result
        try:
            change = plan.change_for(entry.before, current)
        except plan.CannotRevert as error:
            result.reason = str(error)
            return result
        result.changes = plan.describe(change)
        if self.run_id is None:
            result.status, result.after = RevertStatus.WOULD_REVERT, plan.outline(entry.before)
            return result
        result.status, result.reason = self.write(entry, current, change)
        if result.status is not RevertStatus.REVERTED:
            result.changes = {}
        else:
            result.after = plan.outline(entry.before)
        return result

    def write(self, entry: store.NodeEntry, current: Snapshot,
              change: Any) -> tuple[RevertStatus, str]:
        """Write ``change`` (``current`` -> ``entry.before``); the status and reason."""
        assert self.run_id is not None
        run_id = self.run_id

        def restored_and_recorded(connection: Connection, state: TreeState) -> None:
            # Checked here rather than in the TreeCheck's inspect: the consumers the
            # entry knows outside the tree are read on the transaction's connection.
            elsewhere = _not_in_tree(entry, state)
            now = of_state(state, _outside(entry, state, _bodies(connection, elsewhere)
                                           if elsewhere else {}))
            found = differences(entry.before, now, consumer_generations=False)
            if found:
                raise NotRestored(one_line(found))
            store.record_node(connection, run_id, entry.nodename, entry.host, current, now)

        try:
            self.direct.apply_tree_change(change, TreeCheck(entry.root, lambda state: None,
                                                            restored_and_recorded))
        except NotRestored as error:
            return RevertStatus.INVARIANT, f"the write would not restore it, rolled back: {error}"
        except errors.ConcurrentUpdate as error:
            return RevertStatus.CONFLICT, f"written meanwhile ({error}); run the revert again"
        except errors.PlacementError as error:
            return RevertStatus.FAILED, f"Placement refused the change: {error}"
        return RevertStatus.REVERTED, ""


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
