"""The journaled runs of ``placement audit --delete``, ``heal_allocations`` and
``sync_aggregates``.

In-process on the database each of these commands writes through
:class:`~nova_reshape.consistency.journaled_writes.JournaledWrites`: a run
in the journal (:mod:`nova_reshape.journal`) with one entry per node
written, started at its first write (a run that writes nothing leaves no
run) and ended with the command's outcome (:data:`STATUS`), so that
``placement revert RUN_ID`` can put the nodes back. Over
``--placement-url`` there is no transaction to share with the journal:
those runs write with nova's requests and are not journaled
(docs/journal.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

import sqlalchemy as sa

from nova_reshape import journal
from nova_reshape.cmd import journaled
from nova_reshape.consistency.journaled_writes import JournaledWrites, RunInputs
from nova_reshape.journal import RunStatus
from nova_reshape.transport.direct import on_database
from placement_wsgi import service


@contextlib.contextmanager
def journaled_writes(placement: Any, command: str, argv: Sequence[str],
                     inputs: Mapping[str, Any]) -> Iterator[JournaledWrites | None]:
    """The run's writes, journaled in-process; None over HTTP (nova's requests)."""
    direct = on_database(placement)
    if direct is None or direct.direct is None:
        yield None
        return
    with JournaledWrites(direct, RunInputs(command, journal.command_line(argv),
                                           dict(inputs))) as writes:
        yield writes


def finish(writes: JournaledWrites | None, status: RunStatus, counts: Mapping[str, int],
           err: TextIO) -> None:
    """Record how the run ended (when it wrote anything); a database refusing that last
    write is one warning line, the command's outcome stands."""
    if writes is None:
        return
    try:
        writes.finish(status, counts)
    except sa.exc.SQLAlchemyError as error:
        err.write(journaled.UNRECORDED_END.format(run=writes.run_id,
                                                  error=service.one_line(error)))


def revertable(writes: JournaledWrites | None, out: TextIO) -> None:
    """The line naming the run and how to revert it (when it wrote anything)."""
    if writes is not None and writes.run_id is not None:
        out.write(f"journaled as run {writes.run_id} (revertable: placement revert "
                  f"{writes.run_id})\n")
