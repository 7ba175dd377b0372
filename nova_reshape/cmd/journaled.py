"""The migration's run in the journal: started, its nodes recorded, finished.

A real ``migrate_compute_inventory`` in-process on the database is a
journaled run (:mod:`nova_reshape.journal`): :func:`migration_run` records
its start (command line with secrets hidden, inputs) on the Placement
database before any node is checked, each written node is recorded in its
own transaction by the run's writer (``Settings.journal``), and the command
records the end with :func:`finish`. A dry run writes nothing and is not
journaled; nor is a run over ``--placement-url``, which has no transaction
to share (docs/journal.md says why and what to do instead).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

import sqlalchemy as sa

from nova_reshape import journal
from nova_reshape.cmd.refusal import (
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_INVARIANT,
    EXIT_OK,
    EXIT_REFUSED,
)
from nova_reshape.cmd.request import MigrateRequest
from nova_reshape.compute import parallel
from nova_reshape.journal import RunStatus
from nova_reshape.transport.direct import on_database
from placement_wsgi import service

#: The migration's command name in the journal.
COMMAND = "migrate_compute_inventory"

#: A run's status in the journal from the command's exit status.
STATUS_OF_EXIT = {EXIT_OK: RunStatus.OK, EXIT_FAILED: RunStatus.FAILED,
                  EXIT_REFUSED: RunStatus.REFUSED, EXIT_CONFLICT: RunStatus.CONFLICT,
                  EXIT_INVARIANT: RunStatus.INVARIANT}


def inputs_of(request: MigrateRequest) -> dict[str, Any]:
    """What the run was asked, as data (the token left out)."""
    data = dataclasses.asdict(request)
    data["placement"].pop("token", None)
    data["placement"].pop("headers", None)
    return data


@contextlib.contextmanager
def migration_run(opener: parallel.Opener, request: MigrateRequest,
                  argv: Sequence[str]) -> Iterator[journal.Recorder | None]:
    """The run's journal record (None for a dry run or over HTTP: not journaled)."""
    if request.dry_run or request.placement.url:
        yield None
        return
    with opener() as placement:
        direct = on_database(placement)
        if direct is None or direct.direct is None:
            yield None
            return
        with journal.recording(direct.direct.database.engine, COMMAND,
                               journal.command_line(argv), inputs_of(request)) as run:
            yield run


#: The warning when the run's end cannot be recorded (the run's own outcome stands).
UNRECORDED_END = ("warning: the journal could not record how run {run} ended ({error}); "
                  "`placement runs` shows it running; its node entries are exact\n")


def finish(run: journal.Recorder | None, code: int, counts: Mapping[str, int],
           err: TextIO) -> None:
    """Record the run's end: its status from ``code``, its nodes by status
    (``counts``: status -> nodes, as the run's report counted them). A
    database that cannot take that last write (a full disk, say) is one warning
    line on ``err``: the run's outcome and exit status are the nodes'."""
    if run is None:
        return
    try:
        run.finish(STATUS_OF_EXIT.get(code, RunStatus.FAILED),
                   {str(status): count for status, count in counts.items()})
    except sa.exc.SQLAlchemyError as error:
        err.write(UNRECORDED_END.format(run=run.run_id, error=service.one_line(error)))


def interrupted(run: journal.Recorder | None, written: int) -> None:
    """Record a run stopped by a signal after ``written`` nodes."""
    if run is not None:
        # The interruption's line is what the operator needs; a database that cannot
        # take this last write leaves the run "running", its entries exact.
        with contextlib.suppress(sa.exc.SQLAlchemyError):
            run.finish(RunStatus.INTERRUPTED, {"written": written})
