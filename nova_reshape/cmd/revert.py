"""``nova-reshape-manage placement revert RUN_ID [--dry-run] [--host HOST]...``.

Puts every node a journaled run changed (those of the named hosts only,
with ``--host``) back to its state before the run, in-process on the
Placement database (``--config-file``); see docs/journal.md and
:mod:`nova_reshape.journal.revert`. A node changed since the run is refused
with one line naming what changed, and the other nodes are still reverted.
``--dry-run`` writes nothing and prints what the real revert then writes.
``--workers N`` spreads the nodes over N processes (default: as the
migration picks, :func:`~nova_reshape.compute.parallel.auto_workers`).
A real revert is itself a journaled run (command ``revert``), so it can be
reverted in turn. ``--journal FILE --placement-url URL`` reverts a run made
over HTTP, journaled in that file, through the API
(:mod:`nova_reshape.cmd.revert_http`).

Exit status, as the migration's classes:

* 0 - every node reverted (or already back), or a dry run with none refused;
* 1 - a node failed (Placement refused the change, the database broke);
* 2 - bad input: no database, an unknown run id, a --host the run never changed,
  a journal file missing, not a journal or not writable;
* 3 - some node was refused (changed since the run); the others were reverted;
* 4 - a node was written meanwhile (generation conflict); run again;
* 5 - a node's change would not have restored it and was rolled back;
* 130 / 143 - stopped by SIGINT / SIGTERM; every node is reverted or untouched,
  running again completes the rest.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from typing import Any, TextIO

from nova_reshape import journal
from nova_reshape.cmd import request, revert_http, runs
from nova_reshape.cmd.placement_db import bad_input, open_database
from nova_reshape.cmd.revert_output import (  # noqa: F401 - re-exported
    STATUS_EXITS,
    add_report_argument,
    check_report,
    outcome,
    report_revert,
)
from nova_reshape.compute import parallel
from nova_reshape.journal.revert import NodeRevert, Reverter, forget_names, selected
from nova_reshape.journal.store import EntryKey, entry_keys
from nova_reshape.journal.workers import revert_in_workers
from nova_reshape.progress import progress_callback

COMMAND = "revert"

def add_parser(actions: Any) -> None:
    """Register ``placement revert`` under the placement category's actions."""
    parser = actions.add_parser("revert", help="put back what a journaled run wrote")
    parser.add_argument("run_id", metavar="RUN_ID")
    parser.add_argument("--dry-run", action="store_true",
                        help="write nothing; print what the revert would write")
    parser.add_argument("--host", action="append", default=[], dest="hosts", metavar="HOST",
                        help="only this host's (or node's) nodes; repeatable")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        dest="output_format")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="worker processes (default: as the migration picks)")
    parser.add_argument("--progress", action="store_true",
                        help="progress bars even when stderr is no terminal")
    add_report_argument(parser)
    runs.add_journal_argument(parser, "journal")
    request.add_placement_arguments(parser)
    parser.set_defaults(run=revert_command, verbose=False)


def revert_command(args: Any, out: TextIO, err: TextIO) -> int:
    """``placement revert``: the nodes reverted (or planned), the report, the exit status."""
    access = request.PlacementAccess.from_args(args)
    check_report(args.report)
    if access.url or args.journal:
        return revert_http.revert_command(args, access, out, err)
    args.config_files = list(access.config_files)
    with runs.journal_engine(args.config_files) as engine:
        run = runs.find_run(engine, args.run_id)
        entries = selected(entry_keys(engine, run.id), args.hosts)
    if args.hosts and not entries:
        raise bad_input(f"run {run.id} changed no node of {', '.join(args.hosts)}")
    progress = progress_callback(err, args.output_format, force=args.progress)
    with open_database(args.config_files) as placement:
        direct = placement.direct
        if args.dry_run:
            results = revert_nodes(args, direct, entries, None, progress)
            names, revert_id = forget_names(direct.database, run, dry_run=True), None
        else:
            with journal.recording(direct.database.engine, COMMAND,
                                   journal.command_line(getattr(args, "argv", [])),
                                   {"run": run.id, "hosts": list(args.hosts)},
                                   reverts=run.id) as recorder:
                revert_id = recorder.run_id
                results = revert_nodes(args, direct, entries, revert_id, progress)
                names = forget_names(direct.database, run, dry_run=False)
                recorder.finish(outcome(results)[1],
                                collections.Counter(str(r.status) for r in results))
    return report_revert(args, run.id, revert_id, results, names, out)


def revert_nodes(args: Any, direct: Any, keys: Sequence[EntryKey], run_id: str | None,
                 progress: Any) -> list[NodeRevert]:
    """The entries reverted (or planned, without ``run_id``) in this process, or over
    ``--workers`` processes (default: as the migration picks for that many nodes)."""
    workers = args.workers or parallel.auto_workers(len(keys))
    if workers <= 1:
        return Reverter(direct, run_id=run_id, progress=progress).revert(keys)
    opener = functools.partial(open_database, list(args.config_files))
    return revert_in_workers(opener, keys, run_id=run_id, workers=workers, progress=progress)
