"""A revert over several worker processes (``placement revert --workers N``).

Like the migration's write phase, a revert is CPU-bound in Python (the
Placement object functions run in the reverting process), so one process
would take longer than the migration it undoes, which spreads over workers.
Each worker is a spawned process with its own PlacementDirect (``opener``,
which must pickle) and takes the entries a chunk at a time
(:data:`CHUNK` nodes, in the journal's order; results come back in that
order). Nodes never share providers, so workers never write the same row;
each worker writes its nodes a group per transaction (the group's size
follows from the worker's share of the nodes, not from one chunk), each
node journaled in it under the revert's run.

SIGINT and SIGTERM: the parent sets a shared stop flag, each worker
finishes the node it is writing (:func:`placement_wsgi.cmd.signals.defer_to`)
and returns what it did, and the parent raises the ``KeyboardInterrupt``
once they have; every node is reverted or untouched.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.journal.revert import NodeRevert, Reverter
from nova_reshape.journal.store import EntryKey
from placement_wsgi.cmd import signals

#: Nodes per task handed to a worker.
CHUNK = 50

#: Opens Placement in-process in a worker: a context manager yielding a transport
#: whose ``direct`` is the open PlacementDirect; must pickle.
Opener = Callable[[], contextlib.AbstractContextManager[Any]]

_WORKER: dict[str, Any] = {}


def _start(opener: Opener, stop_flag: Any, run_id: str | None, batch_size: int,
           share: int) -> None:
    """Pool initializer: nothing that can fail (a failing initializer makes the pool
    start workers forever); Placement is opened by the worker's first task."""
    signals.defer_to(stop_flag.set)
    _WORKER.update(opener=opener, stop=stop_flag.is_set, run_id=run_id, batch_size=batch_size,
                   share=share)


def _reverter() -> Reverter:
    """The worker's Reverter, on Placement opened once for the worker's life."""
    if "reverter" not in _WORKER:
        stack = contextlib.ExitStack()
        atexit.register(stack.close)
        transport = stack.enter_context(_WORKER["opener"]())
        _WORKER["reverter"] = Reverter(transport.direct, run_id=_WORKER["run_id"],
                                       batch_size=_WORKER["batch_size"], stop=_WORKER["stop"],
                                       share=_WORKER["share"])
    return _WORKER["reverter"]


def _revert(keys: list[EntryKey]) -> list[NodeRevert]:
    """One chunk reverted; any failure comes back as a NovaException naming it (an
    exception that does not survive pickling would leave the pool waiting)."""
    try:
        return _reverter().revert(keys)
    except Exception as error:  # noqa: BLE001 - reported to the parent, one line
        raise exception.NovaException(
            message=f"a revert worker failed: {type(error).__name__}: {error}") from None


def revert_in_workers(opener: Opener, keys: Sequence[EntryKey], *, run_id: str | None,
                      workers: int, progress: Callable[[str, int, int], None] | None = None,
                      batch_size: int = CHUNK) -> list[NodeRevert]:
    """Each entry's outcome, in the order of ``keys`` (see the module docstring).

    Interrupted, it raises the ``KeyboardInterrupt`` once every worker has
    stopped; nodes not reached are untouched.
    """
    context = multiprocessing.get_context("spawn")
    stop_flag = context.Event()
    chunks = [list(keys[start:start + CHUNK]) for start in range(0, len(keys), CHUNK)]
    results: list[NodeRevert] = []
    pool = context.Pool(workers, initializer=_start,
                        initargs=(opener, stop_flag, run_id, batch_size,
                                  -(-len(keys) // workers)))
    try:
        for done in pool.imap(_revert, chunks):
            results += done
            if progress is not None:
                progress("revert", len(results), len(keys))
    except BaseException:
        stop_flag.set()  # the chunks still queued return at once
        raise
    finally:
        # Never terminate(): workers defer SIGTERM to the stop flag, so it would
        # wait for them forever; they end once the queue is drained.
        pool.close()
        pool.join()
    return results
