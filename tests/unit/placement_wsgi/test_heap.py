"""placement_wsgi.heap: a freed large block is reused without page faults."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")

#: allocates, touches and frees a 20 MiB block twice; prints the page faults of
#: the second round (in a fresh process: the allocator's state is per process)
_ROUNDS = """
import resource, sys
from placement_wsgi import heap
if sys.argv[1] == "keep":
    assert heap.keep_freed_memory()
faults = []
for _ in range(2):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = bytearray(20 * 1024 * 1024)
    del block
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(faults[1])
"""
PAGES = 20 * 1024 * 1024 // 4096


def _second_round_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", _ROUNDS, mode], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


def test_a_freed_block_is_reused_without_faults() -> None:
    assert _second_round_faults("keep") < PAGES // 10


def test_by_default_the_second_round_faults_again() -> None:
    # what keep_freed_memory changes: glibc maps the block afresh
    assert _second_round_faults("default") > PAGES // 2
