"""The consistency commands' writes in-process: nova's requests, a batch per transaction,
every node they touch journaled in that transaction.

Over ``--placement-url`` audit, heal_allocations and sync_aggregates write
with nova's own requests, one transaction each. In-process on the database
(:func:`~nova_reshape.transport.direct.on_database`) they make the very same
writes, in the same order, through
:meth:`~placement_wsgi.direct.PlacementDirect.write_requests`: a batch of
them in ONE transaction (one commit per batch instead of one per request),
each exactly as its request makes it (rows and generations end as nova's
requests leave them).

With a journal (:mod:`nova_reshape.journal`), each transaction also
records every node it touches (the tree of each provider named in a
:class:`Touch`): the tree and its consumers are read inside the
transaction before the writes and again after them, and the entry is
written on the transaction's connection, so it commits with the writes or
not at all. A node a later transaction of the same run touches again keeps
one entry: its "before" from the first, its "after" from the last
(``Recorder.record_again``). The snapshots carry the consumers written that
hold nothing in the tree (an orphan deleted, an instance not yet healed),
so a revert compares and restores them too. The run itself is recorded at
the first write: a command that writes nothing leaves no run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from nova_reshape import journal
from nova_reshape.journal import Snapshot
from nova_reshape.transport.direct import DirectTransport
from placement_wsgi.objects.request_writes import RequestWrites
from placement_wsgi.objects.tree_state import TreeState

T = TypeVar("T")


class Touch(NamedTuple):
    """A write reaches ``provider``'s tree (for ``consumer``, when it writes one); the
    node's host, when the caller knows it."""

    provider: str
    consumer: str | None = None
    host: str | None = None


class RunInputs(NamedTuple):
    """What the journal records about the run (see :func:`nova_reshape.journal.recording`)."""

    command: str
    command_line: str
    inputs: Mapping[str, Any]


class _Node(NamedTuple):
    host: str | None
    consumers: frozenset[str]


def _nodes(writes: RequestWrites, touched: Iterable[Touch]) -> dict[str, _Node]:
    """Root uuid -> the node's host and the consumers written in it (providers that do
    not exist are left out: nothing is written there)."""
    touched = list(touched)
    roots = writes.roots_of([touch.provider for touch in touched])
    hosts: dict[str, str | None] = {}
    consumers: dict[str, set[str]] = {}
    for touch in touched:
        root = roots.get(touch.provider)
        if root is None:
            continue
        if hosts.get(root) is None:
            hosts[root] = touch.host
        consumers.setdefault(root, set()).update([touch.consumer] if touch.consumer else [])
    return {root: _Node(hosts[root], frozenset(consumers[root])) for root in hosts}


def _snapshots(writes: RequestWrites, states: Sequence[TreeState],
               known: Mapping[str, Iterable[str]]) -> dict[str, Snapshot]:
    """Each tree's snapshot, with the consumers ``known[root]`` that hold nothing in it."""
    missing = {root: [consumer for consumer in known.get(root, ())
                      if consumer not in state.allocations]
               for root, state in ((state.root, state) for state in states)}
    bodies = writes.consumers([consumer for found in missing.values() for consumer in found])
    return {state.root: journal.of_state(state, {consumer: bodies.get(consumer)
                                                 for consumer in missing[state.root]})
            for state in states}


class JournaledWrites:
    """Batches of writes on the open database, each in one transaction, journaled when
    ``run`` is given (see the module). A context manager: the run, once started,
    ends with the block (``ok``, or ``failed``/``interrupted`` when it raised; call
    :meth:`finish` first to say otherwise)."""

    def __init__(self, transport: DirectTransport, run: RunInputs | None) -> None:
        self.transport = transport
        self.run_inputs = run
        self.recorder: journal.Recorder | None = None
        #: Root uuid -> the id of the node's entry in this run.
        self.entries: dict[str, int] = {}
        #: Root uuid -> every consumer its entry knows (kept in each later "after").
        self.known: dict[str, frozenset[str]] = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> JournaledWrites:
        return self

    def __exit__(self, *exc_info: Any) -> bool | None:
        return self._stack.__exit__(*exc_info)

    @property
    def run_id(self) -> str | None:
        """The journaled run's id, once it started (None: nothing written, or no journal)."""
        return None if self.recorder is None else self.recorder.run_id

    def finish(self, status: journal.RunStatus, counts: Mapping[str, int]) -> None:
        """End the run (when one started) with ``status`` and ``counts``."""
        if self.recorder is not None and not self.recorder.finished:
            self.recorder.finish(status, counts)

    def write(self, touched: Sequence[Touch], body: Callable[[RequestWrites], T]) -> T:
        """``body(writes)`` in one transaction, every node of ``touched`` journaled in
        it; what ``body`` returns. ``body`` may run again (a deadlock): it keeps no
        state of its own. Placement's errors roll the whole transaction back."""
        if self.run_inputs is not None and self.recorder is None:
            assert self.transport.direct is not None
            self.recorder = self._stack.enter_context(journal.recording(
                self.transport.direct.database.engine, *self.run_inputs))
        recorder, entries, earlier = self.recorder, dict(self.entries), dict(self.known)

        def whole(writes: RequestWrites) -> tuple[T, dict[str, int], dict[str, frozenset[str]]]:
            if recorder is None:
                return body(writes), {}, {}
            nodes = _nodes(writes, touched)
            known = {root: node.consumers | earlier.get(root, frozenset())
                     for root, node in nodes.items()}
            before = _snapshots(writes, writes.trees([root for root in nodes
                                                      if root not in entries]), known)
            for root, snapshot in before.items():  # the consumers that may leave the tree
                known[root] = known[root] | frozenset(snapshot.allocations)
            result = body(writes)
            afters = _snapshots(writes, writes.trees(list(nodes)), known)
            new = [root for root in afters if root not in entries]
            ids = recorder.record_all(
                writes.connection,
                [journal.Change(afters[root].providers[0]["name"], nodes[root].host,
                                before[root], afters[root]) for root in new],
                {entries[root]: after for root, after in afters.items() if root in entries})
            return result, dict(zip(new, ids, strict=True)), {
                root: frozenset(after.allocations) for root, after in afters.items()}

        result, recorded, known_now = self.transport.write_requests(whole)
        self.entries.update(recorded)
        for root, consumers in known_now.items():
            self.known[root] = self.known.get(root, frozenset()) | consumers
        return result
