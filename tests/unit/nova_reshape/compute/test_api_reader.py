"""The over-the-API reader's reads several at once (``each``)."""

from __future__ import annotations

import threading
import time

import pytest

from nova_reshape.compute.api_reader import each


class _InFlight:
    """A read that records how many reads run at the same moment."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()

    def __call__(self, item: int) -> int:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1
        return item * 10


def test_reads_go_up_to_parallel_at_once_and_answer_in_the_items_order():
    read = _InFlight()
    assert each(read, range(9), parallel=4) == [item * 10 for item in range(9)]
    assert read.most == 4


def test_one_at_a_time_when_parallel_is_one():
    read = _InFlight()
    assert each(read, [3, 1, 2]) == [30, 10, 20]
    assert read.most == 1


def test_a_failed_read_reaches_the_caller():
    def read(item: int) -> int:
        if item == 2:
            raise LookupError("no such provider")
        return item

    with pytest.raises(LookupError, match="no such provider"):
        each(read, range(5), parallel=3)
