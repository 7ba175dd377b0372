"""Pausing Python's cyclic garbage collector around allocation-heavy work.

A large allocation-candidates answer builds hundreds of thousands of short-
lived tuples, dicts and lists. Each time enough of them exist the collector
runs, and its full passes walk every live object of the process: about 13%
of a 10,000-provider request on PostgreSQL (237 ms against 206 ms without
the collector, ``tools/profile_candidates.py --flat --trees 10000``). None of
that garbage is cyclic (reference counting frees it), so the collector is
paused for the duration of such work and resumed afterwards; any cycles made
meanwhile are collected later as usual.

The pause is counted, so overlapping pauses (threaded servers) resume the
collector only when the last one ends, and it never re-enables a collector
that someone else had turned off.

A process that is one long run of batches (a migration worker) cannot pause
the collector for the whole run: the trees it drops each batch hold cycles,
which only the collector frees. :func:`for_a_long_run` makes it cheap
instead: its full passes walked the whole heap several times a run (about a
quarter of a migration's CPU at 300 nodes, profiled on PostgreSQL).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: The collector's thresholds in a long run (the defaults: 700, 10, 10).
LONG_RUN_THRESHOLDS = (50_000, 20, 100)

_lock = threading.Lock()
_pauses = 0
_we_disabled = False


@contextlib.contextmanager
def paused_collection() -> Iterator[None]:
    """Run the ``with`` body with the cyclic collector off."""
    global _pauses, _we_disabled
    with _lock:
        if _pauses == 0:
            _we_disabled = gc.isenabled()
            if _we_disabled:
                gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _we_disabled:
                gc.enable()
                _we_disabled = False


def for_a_long_run() -> None:
    """Collect less often for the rest of this process: what exists now (modules,
    configuration) is frozen out of every later pass (``gc.freeze``) and the
    passes run at :data:`LONG_RUN_THRESHOLDS`. Cycles made afterwards are still
    collected. For a process that is one run (a command, a worker), not a server
    or a test process (what is frozen is never collected)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*LONG_RUN_THRESHOLDS)
