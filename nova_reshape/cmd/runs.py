"""``nova-reshape-manage placement runs [show RUN_ID] [--format text|json]``.

Lists the journaled runs of the Placement database (docs/journal.md): id,
start, end, command, nodes changed / unchanged / refused, status; ``show
RUN_ID`` prints one run, its inputs and its nodes (``--format json``: the
whole record with every node's tree before and after). Read-only: a
database without a journal has no runs and gets none created. ``--journal
FILE`` reads the journal file of runs over ``--placement-url`` instead
(:mod:`nova_reshape.journal.journal_file`; no Placement needed).

Exit status: 0; 2 for bad input (no database configured, an unknown run
id, a journal file that is missing or not a journal); 1 when the database
cannot be read.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any, TextIO

from sqlalchemy.engine import Engine

from nova_reshape import journal
from nova_reshape.cmd.placement_db import bad_input, check_placement_database, database_conf
from nova_reshape.cmd.refusal import EXIT_OK
from nova_reshape.journal import journal_file
from placement_wsgi import service

#: The listing's columns: heading, width.
COLUMNS = (("RUN", 36), ("STARTED", 20), ("ENDED", 20), ("COMMAND", 25), ("CHANGED", 7),
           ("UNCHANGED", 9), ("REFUSED", 7), ("STATUS", 11))


def add_parser(actions: Any) -> None:
    """Register ``placement runs`` under the placement category's actions."""
    parser = actions.add_parser("runs", help="list the journaled runs (or show one)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        dest="output_format")
    add_journal_argument(parser, "journal")
    shows = parser.add_subparsers(dest="runs_action", metavar="show", required=False)
    show = shows.add_parser("show", help="one run and its nodes")
    show.add_argument("run_id", metavar="RUN_ID")
    show.add_argument("--format", choices=("text", "json"), default=None,
                      dest="show_format")
    add_journal_argument(show, "show_journal")
    parser.set_defaults(run=lambda args, out, err: runs_command(args, out), verbose=False)


def add_journal_argument(parser: Any, dest: str) -> None:
    """``--journal FILE``: the journal file of runs over ``--placement-url``."""
    parser.add_argument("--journal", metavar="FILE", dest=dest, default=None,
                        help="the journal file of runs over --placement-url (instead of "
                        "the Placement database's journal)")


@contextlib.contextmanager
def file_engine(path: str, *, write: bool = False) -> Iterator[Engine]:
    """The journal file's engine: it must exist and be a journal (and, to ``write``,
    be writable); a refusal (bad input) otherwise. Nothing is created."""
    try:
        journal_file.check_path(path, create=False)
        if write:
            journal_file.check_path(path, create=True)
        engine = journal_file.open_journal(path, create=False)
    except journal_file.JournalFileError as error:
        raise bad_input(str(error)) from error
    try:
        yield engine
    finally:
        engine.dispose()


@contextlib.contextmanager
def journal_engine(config_files: list[str], path: str | None = None) -> Iterator[Engine]:
    """The journal's engine: the file ``path`` when given (:func:`file_engine`), else
    the checked Placement database's (a refusal when unusable)."""
    if path is not None:
        with file_engine(path) as engine:
            yield engine
        return
    conf = database_conf(config_files)
    check_placement_database(conf)
    database = service.open_database(conf)
    try:
        yield database.engine
    finally:
        database.dispose()


def find_run(engine: Engine, run_id: str, where: str = "this Placement database") -> journal.Run:
    """Run ``run_id``, or a refusal (bad input) naming it."""
    found = journal.get_run(engine, run_id)
    if found is None:
        raise bad_input(f"no run {run_id} in the journal of {where} "
                        "(`placement runs` lists them)")
    return found


def runs_command(args: Any, out: TextIO) -> int:
    """``placement runs``: the listing, or one run."""
    output_format = getattr(args, "show_format", None) or args.output_format
    path = getattr(args, "show_journal", None) or args.journal
    with journal_engine(args.config_files, path) as engine:
        if args.runs_action == "show":
            run = find_run(engine, args.run_id)
            write_run(run, journal.entries(engine, run.id), output_format, out)
        else:
            write_runs(journal.list_runs(engine), output_format, out)
    return EXIT_OK


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def row(run: journal.Run) -> list[str]:
    """The listing's cells of one run."""
    return [run.id, _when(run.started_at), _when(run.ended_at), run.command,
            str(run.changed),
            str(run.counts.get("unchanged", 0) + run.counts.get("already-reverted", 0)),
            str(run.counts.get("refused", 0)), str(run.status)]


def write_runs(runs: list[journal.Run], output_format: str, out: TextIO) -> None:
    """The listing, as a table or a JSON list."""
    if output_format == "json":
        json.dump([run.to_dict() for run in runs], out, indent=2)
        out.write("\n")
        return
    if not runs:
        out.write("no runs recorded\n")
        return
    for cells in ([heading for heading, _ in COLUMNS], *map(row, runs)):
        out.write(" ".join(cell.ljust(width) for cell, (_, width) in zip(cells, COLUMNS,
                                                                          strict=True))
                  .rstrip() + "\n")


def write_run(run: journal.Run, entries: list[journal.NodeEntry], output_format: str,
              out: TextIO) -> None:
    """One run and its nodes."""
    if output_format == "json":
        json.dump(run.to_dict() | {"nodes": [entry.to_dict() for entry in entries]}, out,
                  indent=2)
        out.write("\n")
        return
    counts = ", ".join(f"{key} {value}" for key, value in sorted(run.counts.items()))
    out.write(f"run {run.id}\n  command: {run.command}\n  command line: {run.command_line}\n"
              f"  started: {_when(run.started_at)}  ended: {_when(run.ended_at)}  "
              f"status: {run.status}\n  reverts: {run.reverts or '-'}\n"
              f"  nodes: {run.changed} changed ({counts or 'no counts: not finished'})\n")
    for entry in entries:
        out.write(f"  {entry.nodename} (host {entry.host or '-'}, root {entry.root}): "
                  f"{len(entry.before.providers)} -> {len(entry.after.providers)} providers, "
                  f"{len(entry.after.allocations)} consumers\n")
