"""The migration's run in the journal: started, its nodes recorded, finished.

A real ``migrate_compute_inventory`` in-process on the database is a
journaled run (:mod:`nova_reshape.journal`): :func:`migration_run` records
its start (command line with secrets hidden, inputs) on the Placement
database before any node is checked, each written node is recorded in its
own transaction by the run's writer (``Settings.journal``), and the command
records the end with :func:`finish`. A dry run writes nothing and is not
journaled. A run over ``--placement-url`` has no transaction to share: it
is journaled in a journal file instead, each node in two steps
(:mod:`nova_reshape.journal.journal_file`): :func:`journal_path` says
which file (checked before anything is read), the run tells the operator
on stderr where it is and how to revert it (:data:`JOURNAL_LINE`).
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
    ExitClass,
    Refusal,
)
from nova_reshape.cmd.request import MigrateRequest
from nova_reshape.compute import parallel
from nova_reshape.journal import RunStatus, http_io, journal_file
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


#: What a run over HTTP tells the operator before it writes (stderr).
JOURNAL_LINE = ("journal: {path}, run {run} (back out with: placement revert {run} "
                "--journal {path} --placement-url URL)\n")


def journal_path(request: MigrateRequest) -> str | None:
    """The journal file of a real run over HTTP (``--journal``, else the default beside
    the report or in the current directory), checked; None when not journaled in a
    file. A refusal (bad input) for an unusable path, or ``--journal`` in-process."""
    if not request.placement.url:
        if request.journal:
            raise Refusal(ExitClass.BAD_INPUT, "--journal is for runs over --placement-url; "
                          "in-process runs journal in the Placement database")
        return None
    if request.dry_run:
        return None
    path = request.journal or journal_file.default_path(request.report)
    try:
        journal_file.check_path(path, create=True)
    except journal_file.JournalFileError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error
    return path


@contextlib.contextmanager
def migration_run(opener: parallel.Opener, request: MigrateRequest, argv: Sequence[str],
                  err: TextIO | None = None) -> Iterator[journal.Recorder | None]:
    """The run's journal record (None for a dry run: not journaled); over HTTP in its
    journal file (:func:`journal_path`), announced on ``err``."""
    if request.dry_run:
        yield None
        return
    path = journal_path(request)
    if path is not None:
        with _file_run(opener, request, argv, path, err) as run:
            yield run
        return
    with opener() as placement:
        direct = on_database(placement)
        if direct is None or direct.direct is None:
            yield None
            return
        with journal.recording(direct.direct.database.engine, COMMAND,
                               journal.command_line(argv), inputs_of(request)) as run:
            yield run


@contextlib.contextmanager
def _file_run(opener: parallel.Opener, request: MigrateRequest, argv: Sequence[str],
              path: str, err: TextIO | None) -> Iterator[journal.Recorder]:
    with opener() as placement:  # first: Placement unreachable leaves no file behind
        names = http_io.custom_names(placement)
    try:
        engine = journal_file.open_journal(path, create=True)
    except journal_file.JournalFileError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error
    try:
        with journal.recording(engine, COMMAND, journal.command_line(argv), inputs_of(request),
                               custom_names=names) as run:
            if err is not None:
                err.write(JOURNAL_LINE.format(path=path, run=run.run_id))
            yield run
    finally:
        engine.dispose()


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
