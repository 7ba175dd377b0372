"""Keeping freed heap memory in a serving process instead of handing it back.

A large answer (an allocation-candidates body of megabytes, the dicts and
rows behind it) is built in fresh memory and freed at the end of the
request. glibc's ``malloc`` serves blocks above its mmap threshold with
``mmap`` and returns the free top of the heap to the kernel past its trim
threshold, so the next request maps the same amount again, and the kernel
pays a page fault for every 4 KiB touched: on the development machine (a
virtual machine) about 2.7 microseconds each, 1,500 faults and 7 ms of
system CPU in a 60 ms request for 1,000 nested trees.

:func:`keep_freed_memory` raises both thresholds once, at service start, so
a worker keeps what it freed and reuses it: its resident size stays at
its high-water mark (the largest answer it built, plus
:data:`TRIM_THRESHOLD` at most) rather than shrinking between requests.
Python's own small-object arenas are not affected. Anywhere but glibc
(no ``mallopt``) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

LOG = logging.getLogger(__name__)

#: ``mallopt`` parameters (glibc's <malloc.h>)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: blocks up to this size come from the heap (glibc's largest allowed value on 64-bit)
MMAP_THRESHOLD = 32 * 1024 * 1024
#: free memory at the top of the heap beyond this goes back to the kernel
TRIM_THRESHOLD = 256 * 1024 * 1024


def keep_freed_memory() -> bool:
    """Set the thresholds (see the module docstring); False where that is impossible."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):  # no C library by that name, or not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    if not done:
        LOG.debug("mallopt refused the heap thresholds; keeping the C library's defaults")
    return done
