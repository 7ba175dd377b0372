"""The peak resident memory of a command's own processes, read from /proc (Linux).

``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is not that figure for a
benchmark that starts the command: a child's high-water mark starts from
the starting process's memory at fork (the kernel keeps the larger of the
two across ``exec``), so a benchmark holding a large report inflates the
figure of every later run by its own size. Each process's ``VmHWM`` (the
high-water mark of its own address space since ``exec``) is the command's
own: :func:`run_sampled` reads it for the command and every descendant
every ``interval`` seconds while the command runs and keeps the largest
per process; :class:`Sampler` does the same for a benchmark that runs the
command in-process (its worker processes are its own children). A process
living shorter than ``interval`` can be missed, and so can what one adds in
its last ``interval``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any, NamedTuple


class SampledRun(NamedTuple):
    """How a command ended and the peak of its largest process."""

    returncode: int | None
    peak_rss_mb: float
    killed: bool


def _children() -> dict[int, list[int]]:
    """parent pid -> child pids, every process /proc shows."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    return children


def descendants(pid: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """``pid`` and every process below it (in ``children``: a :func:`_children` map
    read once for several look-ups; default: read now)."""
    if children is None:
        children = _children()
    found, waiting = [], [pid]
    while waiting:
        current = waiting.pop()
        found.append(current)
        waiting.extend(children.get(current, ()))
    return found


def high_water_kb(pid: int) -> int:
    """``VmHWM`` of ``pid`` in KiB; 0 when it is gone or has no address space."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_sampled(command: Sequence[str], timeout: float | None = None,
                interval: float = 0.1, **popen: Any) -> SampledRun:
    """Run ``command`` (``subprocess.Popen`` arguments in ``popen``), sampling its
    processes' peaks; after ``timeout`` seconds SIGKILL its process group (give
    ``start_new_session=True`` then) and report it killed."""
    process = subprocess.Popen(command, **popen)
    peaks: dict[int, int] = {}
    deadline = None if timeout is None else time.monotonic() + timeout
    killed = False
    while process.poll() is None:
        for pid in descendants(process.pid):
            peaks[pid] = max(peaks.get(pid, 0), high_water_kb(pid))
        if deadline is not None and time.monotonic() >= deadline:
            os.killpg(process.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(interval)
    process.wait()
    return SampledRun(process.returncode, round(max(peaks.values(), default=0) / 1024, 1),
                      killed)


class Sampler:
    """The peaks of this process's descendants, sampled every ``interval`` seconds
    in a thread while the ``with`` block runs: the workers of a run started
    in-process. The trees of the pids in ``exclude`` (a service the benchmark
    started, say) are left out.

    ``peaks``: pid -> the process's own peak in KiB (its ``VmHWM``, never its
    parent's memory at fork); ``cpu_seconds``: the sampling thread's own CPU
    time, for a benchmark to take off its process's.
    """

    def __init__(self, interval: float = 0.25, exclude: Sequence[int] = ()) -> None:
        self.interval = interval
        self.exclude = list(exclude)
        self.peaks: dict[int, int] = {}
        self.cpu_seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="process-peaks", daemon=True)

    def sample(self) -> None:
        """Read each descendant's ``VmHWM`` once, keeping the largest per process."""
        children = _children()
        me = os.getpid()
        left_out = {pid for root in self.exclude for pid in descendants(root, children)}
        for pid in descendants(me, children):
            if pid != me and pid not in left_out:
                self.peaks[pid] = max(self.peaks.get(pid, 0), high_water_kb(pid))

    def _run(self) -> None:
        start = time.thread_time()
        while not self._stop.wait(self.interval):
            self.sample()
        self.sample()
        self.cpu_seconds = time.thread_time() - start

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
