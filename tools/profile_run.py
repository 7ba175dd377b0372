"""cProfile around one timed command of a benchmark (``--profile DIR``), not a benchmark.

:func:`profiled` profiles the block when a directory is given and writes
``DIR/NAME.prof`` (read it with ``python -m pstats DIR/NAME.prof``); the
benchmarks' timed commands are wrapped in it so a profile and the figures
come from the same run.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
from collections.abc import Iterator


@contextlib.contextmanager
def profiled(directory: str | None, name: str) -> Iterator[None]:
    """Profile the block into ``directory/name.prof`` (nothing when ``directory`` is None)."""
    if directory is None:
        yield
        return
    os.makedirs(directory, exist_ok=True)
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        profiler.dump_stats(os.path.join(directory, f"{name}.prof"))
