"""tools/process_peaks.py: the peak memory of a command's own processes.

The figure the migration's benchmarks report for "every process <= 500 MB"
must be the command's, not the benchmark's: a child started by a process
holding a large buffer reports that buffer in ``getrusage(RUSAGE_CHILDREN)``,
never in its own ``VmHWM``.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tools"))

import process_peaks  # noqa: E402

#: A child that takes about 120 MB, plus a grandchild of its own, then exits.
GROWS = ("import subprocess, sys; block = bytearray(120 * 2**20); "
         "subprocess.run([sys.executable, '-c', 'import time; time.sleep(0.5)']); "
         "block[::4096] = b'x' * len(block[::4096])")


def test_the_peak_is_the_commands_largest_process() -> None:
    done = process_peaks.run_sampled([sys.executable, "-c", GROWS + "; import time; "
                                      "time.sleep(0.5)"])
    assert done.returncode == 0 and not done.killed
    assert 110 <= done.peak_rss_mb < 400


def test_a_large_starting_process_does_not_count() -> None:
    held = bytearray(300 * 2**20)
    held[::4096] = b"x" * len(held[::4096])
    done = process_peaks.run_sampled([sys.executable, "-c", "import time; time.sleep(0.5)"])
    assert done.peak_rss_mb < 100
    del held


def test_a_command_past_its_time_is_killed_with_its_process_group() -> None:
    done = process_peaks.run_sampled(
        [sys.executable, "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', "
         "'import time; time.sleep(60)'])"], timeout=1.0, start_new_session=True)
    assert done.killed
    assert done.returncode == -signal.SIGKILL


def test_descendants_lists_the_whole_tree() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                                "subprocess.run([sys.executable, '-c', 'import time; "
                                "time.sleep(30)'])"], start_new_session=True)
    try:
        for _ in range(100):
            found = process_peaks.descendants(process.pid)
            if len(found) >= 2:
                break
            subprocess.run(["sleep", "0.05"])
        assert found[0] == process.pid and len(found) >= 2
        assert all(process_peaks.high_water_kb(pid) > 0 for pid in found)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.parametrize("pid", [0, 2**22 + 7])
def test_a_process_gone_or_without_memory_reads_zero(pid: int) -> None:
    assert process_peaks.high_water_kb(pid) == 0


def _earlier_children() -> set[int]:
    """This process's descendants before a test starts its own (in the full suite a
    worker may hold some: multiprocessing's resource tracker, say)."""
    return set(process_peaks.descendants(os.getpid()))


def test_the_sampler_keeps_each_child_own_peak_not_this_process_memory() -> None:
    held = bytearray(300 * 2**20)
    held[::4096] = b"x" * len(held[::4096])
    earlier = _earlier_children()
    with process_peaks.Sampler(interval=0.05) as sampler:
        subprocess.run([sys.executable, "-c", GROWS + "; import time; time.sleep(0.5)"],
                       check=True)
    del held
    peaks_mb = sorted(kib / 1024 for pid, kib in sampler.peaks.items() if pid not in earlier)
    assert len(peaks_mb) == 2  # the child and its grandchild
    assert peaks_mb[0] < 100 and 110 <= peaks_mb[1] < 250
    assert sampler.cpu_seconds > 0


def test_the_sampler_leaves_out_the_trees_it_is_told_to() -> None:
    service = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                                "subprocess.run([sys.executable, '-c', 'import time; "
                                "time.sleep(30)'])"], start_new_session=True)
    try:
        earlier = _earlier_children() | {service.pid}
        with process_peaks.Sampler(interval=0.05, exclude=[service.pid]) as sampler:
            subprocess.run([sys.executable, "-c", "import time; time.sleep(0.3)"], check=True)
        assert service.pid not in sampler.peaks
        assert len(set(sampler.peaks) - earlier) == 1
    finally:
        os.killpg(service.pid, signal.SIGKILL)
        service.wait()
