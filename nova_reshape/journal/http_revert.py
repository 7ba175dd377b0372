"""``revert`` over ``--placement-url``: a run journaled in a file, put back through the API.

The same steps and outcomes as the in-process revert
(:class:`~nova_reshape.journal.revert.Reverter`, whose comparisons and
change back it uses), with what HTTP allows instead of a transaction:

* the nodes come from the journal file
  (:mod:`~nova_reshape.journal.journal_file`), outcomes and intents
  without outcome alike; the node is read over the API
  (:func:`~nova_reshape.journal.http_io.read_snapshot`);
* a node whose outcome is missing (the run was killed between its intent
  and its outcome) is **resolved** first: Placement holds its "before"
  (consumer generations aside, as for any node already back) -> the run
  never wrote it, or a revert already put it back (``already-reverted``,
  nothing to do); it holds
  the planned "after" (generations aside) -> it was written, and is
  reverted as any other; anything else -> refused with one line (the
  write was cut mid-way: run the migration again to complete it, then
  revert);
* the change back is the request sequence
  (:func:`~nova_reshape.journal.http_io.write_change`), journaled in two
  steps like the migration's: the intent (the node as found, and the
  "before" it is to get) before the first request, the outcome (the node
  read back) after it. Read back different from the "before" is
  ``invariant`` (over HTTP nothing can roll it back: the line says what
  differs, the outcome is journaled as read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from nova_reshape.journal import http_io, journal_file, plan, store
from nova_reshape.journal.revert import NodeRevert, Reached, Reverter, RevertStatus, one_line
from nova_reshape.journal.snapshot import Snapshot, differences
from nova_reshape.transport.base import Placement
from placement_wsgi import errors

#: Why a node with an intent but no outcome is refused.
CUT_MID_WAY = ("the run's outcome for this node is missing and Placement holds neither its "
               "before nor its planned after ({found}): the write was cut mid-way; run the "
               "migration again to complete it, then revert")
NEVER_WRITTEN = ("never written by the run, or already put back (its outcome is missing and "
                 "Placement holds its before)")


def _left(entry: store.NodeEntry, current: Snapshot, status: RevertStatus,
          reason: str) -> NodeRevert:
    """A node the revert leaves as it is, with its outcome and why."""
    return NodeRevert(entry.nodename, entry.host, entry.root, status, reason,
                      before=plan.outline(current))


class HttpReverter(Reverter):
    """Reverts the nodes of a run journaled in ``journal`` (a journal file's engine)
    through ``placement`` (an HTTP transport). ``run_id``: the revert's own run
    in that file (None for a dry run)."""

    def __init__(self, placement: Placement, journal: Engine, *, run_id: str | None,
                 progress: Callable[[str, int, int], None] | None = None,
                 stop: Callable[[], bool] = lambda: False) -> None:
        super().__init__(None, run_id=run_id, progress=progress, stop=stop)  # type: ignore[arg-type]
        self.placement = placement
        self.journal = journal
        if run_id is not None:  # it records intents and outcomes in the file
            journal_file.add_tables(journal)
        #: Roots of the entries whose outcome is missing (their "after" is the planned one).
        self.pending: set[str] = set()

    def batches(self, keys: Sequence[store.EntryKey]) -> Iterator[list[store.NodeEntry]]:
        for batch in journal_file.entries_of(self.journal, keys, self.batch_size):
            self.pending |= {item.entry.root for item in batch if item.pending}
            yield [item.entry for item in batch]

    def read_now(self, batch: Sequence[store.NodeEntry]) -> dict[str, Snapshot]:
        found = {}
        for entry in batch:
            now = http_io.read_snapshot(self.placement, entry.root,
                                        http_io.whole_consumers(entry.before, entry.after))
            if now is not None:
                found[entry.root] = now
        return found

    def group_size(self, count: int) -> int:
        return 1  # the request sequence is one node at a time

    def decide(self, entry: store.NodeEntry, current: Snapshot | None) -> Reached:
        if entry.root in self.pending and current is not None:
            if not differences(entry.before, current, consumer_generations=False):
                return Reached(entry, _left(entry, current, RevertStatus.ALREADY,
                                            NEVER_WRITTEN))
            found = differences(entry.after, current, consumer_generations=False)
            if found:
                return Reached(entry, _left(entry, current, RevertStatus.REFUSED,
                                            CUT_MID_WAY.format(found=one_line(found))))
            entry = entry._replace(after=current)  # written: the after is what is there
        return super().decide(entry, current)

    def write(self, entry: store.NodeEntry, current: Snapshot,
              change: Any) -> tuple[RevertStatus, str]:
        assert self.run_id is not None
        journal_file.record_intent(self.journal, self.run_id, entry.nodename, entry.host,
                                   current, entry.before)
        try:
            http_io.write_change(self.placement, change)
        except errors.ConcurrentUpdate as error:
            return RevertStatus.CONFLICT, f"written meanwhile ({error}); run the revert again"
        except errors.PlacementError as error:
            return RevertStatus.FAILED, f"Placement refused the change: {error}"
        after = http_io.read_snapshot(self.placement, entry.root,
                                      http_io.whole_consumers(current, entry.before))
        if after is None:
            return RevertStatus.FAILED, f"root provider {entry.root} is gone after the write"
        journal_file.record_outcome(self.journal, self.run_id, entry.nodename, entry.host,
                                    current, after)
        found = differences(entry.before, after, consumer_generations=False)
        if found:
            return RevertStatus.INVARIANT, ("written, but read back it is not the before "
                                            f"(over HTTP nothing rolls it back): {one_line(found)}")
        return RevertStatus.REVERTED, ""
