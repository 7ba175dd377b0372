"""Progress of a long migration on a terminal: nodes done/total, rate and ETA.

:func:`progress_callback` returns the ``progress(phase, done, total)``
callback that :class:`~nova_reshape.compute.migrate.Migration` and
:class:`~nova_reshape.compute.parallel.ParallelMigration` call after each
node, or ``None`` (no progress shown) when the output is for a program:
``--format json``, or standard error not a terminal, unless ``--progress``
forces a bar. Each phase (``check``, then ``migrate``) gets its own tqdm bar
on standard error, e.g.::

    812/1000 nodes check |████████▏ | 81% [00:04<00:01, 190.2 nodes/s]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

Progress = Callable[[str, int, int], None]

#: Done/total and the phase first (what a reader looks for), then bar, rate and ETA.
BAR_FORMAT = ("{n_fmt}/{total_fmt} nodes {desc} |{bar}| {percentage:3.0f}% "
              "[{elapsed}<{remaining}, {rate_fmt}]")


class PhaseBars:
    """A ``progress(phase, done, total)`` callback drawing one tqdm bar per phase;
    ``unit`` names what is counted (nodes, unless told)."""

    def __init__(self, stream: TextIO, unit: str = "nodes") -> None:
        self.stream = stream
        self.unit = unit
        self.phase: str | None = None
        self.bar: tqdm | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase or self.bar is None:
            self.close()
            self.phase = phase
            self.bar = tqdm(total=total, desc=phase, unit=f" {self.unit}", file=self.stream,
                            bar_format=BAR_FORMAT.replace("nodes", self.unit),
                            mininterval=0.1, dynamic_ncols=True)
        bar = self.bar
        if bar.total != total:
            bar.total = total
        bar.update(done - bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        """Finish the current bar (its last state stays on the screen)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def progress_callback(stream: TextIO, output_format: str = "text",
                      force: bool = False, unit: str = "nodes") -> PhaseBars | None:
    """The progress callback for a run writing its report as ``output_format``.

    Quiet (``None``) for ``json`` output and when ``stream`` is not a
    terminal; ``force`` (``--progress``) shows the bars anyway.
    """
    if force:
        return PhaseBars(stream, unit)
    if output_format == "json" or not stream.isatty():
        return None
    return PhaseBars(stream, unit)
