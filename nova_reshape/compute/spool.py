"""Records kept on disk between a run's two phases, so memory does not grow with the nodes.

A migration checks every node before it writes any (a refusal anywhere
means nothing is written), so what the check found for each node must
outlive the check phase: the described node and its compact result. At
50,000 nodes that is about 1 GB of Python objects; a :class:`Spool` keeps
them pickled in an unnamed temporary file instead (a few KB per node on
disk, nothing in memory) and hands them back once, in the order they were
put. The file disappears when the spool is closed or the process ends.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Spool(Generic[T]):
    """Picklable records written in order, read back once in the same order.

    :meth:`put` appends; :meth:`drain` yields every record put so far and
    empties the spool (records put while draining are not yielded). The
    file is created at the first :meth:`put`.
    """

    def __init__(self) -> None:
        self._file = None
        self.count = 0

    def put(self, record: T) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="nova-reshape-spool-")
        pickle.dump(record, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def drain(self) -> Iterator[T]:
        """Every record, in the order put; the spool is empty afterwards."""
        stream, count = self._file, self.count
        self._file, self.count = None, 0
        if stream is None:
            return
        try:
            stream.seek(0)
            for _ in range(count):
                yield pickle.load(stream)
        finally:
            stream.close()

    def close(self) -> None:
        """Drop every record not drained."""
        if self._file is not None:
            self._file.close()
        self._file, self.count = None, 0
