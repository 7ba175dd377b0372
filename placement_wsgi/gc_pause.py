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
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

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
