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
reverted in turn.

Exit status, as the migration's classes:

* 0 - every node reverted (or already back), or a dry run with none refused;
* 1 - a node failed (Placement refused the change, the database broke);
* 2 - bad input: no database, an unknown run id, a --host the run never changed;
* 3 - some node was refused (changed since the run); the others were reverted;
* 4 - a node was written meanwhile (generation conflict); run again;
* 5 - a node's change would not have restored it and was rolled back;
* 130 / 143 - stopped by SIGINT / SIGTERM; every node is reverted or untouched,
  running again completes the rest.
"""

from __future__ import annotations

import collections
import functools
import json
from collections.abc import Sequence
from typing import Any, TextIO

from nova_reshape import journal
from nova_reshape.cmd import runs
from nova_reshape.cmd.placement_db import bad_input, open_database
from nova_reshape.cmd.refusal import (
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_INVARIANT,
    EXIT_OK,
    EXIT_REFUSED,
)
from nova_reshape.compute import parallel
from nova_reshape.journal import RunStatus
from nova_reshape.journal.plan import summary
from nova_reshape.journal.revert import (
    NodeRevert,
    Reverter,
    RevertStatus,
    forget_names,
    selected,
)
from nova_reshape.journal.store import EntryKey, entry_keys
from nova_reshape.journal.workers import revert_in_workers
from nova_reshape.progress import progress_callback

COMMAND = "revert"

#: The exit status each node outcome leads to, most severe first.
STATUS_EXITS = ((RevertStatus.REFUSED, EXIT_REFUSED, RunStatus.REFUSED),
                (RevertStatus.INVARIANT, EXIT_INVARIANT, RunStatus.INVARIANT),
                (RevertStatus.FAILED, EXIT_FAILED, RunStatus.FAILED),
                (RevertStatus.CONFLICT, EXIT_CONFLICT, RunStatus.CONFLICT))


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
    parser.set_defaults(run=revert_command, verbose=False)


def outcome(results: Sequence[NodeRevert]) -> tuple[int, RunStatus]:
    """The exit status and the journal status of a revert's node outcomes."""
    found = {result.status for result in results}
    return next(((code, status) for node, code, status in STATUS_EXITS if node in found),
                (EXIT_OK, RunStatus.OK))


def revert_command(args: Any, out: TextIO, err: TextIO) -> int:
    """``placement revert``: the nodes reverted (or planned), the report, the exit status."""
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
    code, _ = outcome(results)
    write_report(run.id, revert_id, args.dry_run, results, names, args.output_format, out)
    return code


def revert_nodes(args: Any, direct: Any, keys: Sequence[EntryKey], run_id: str | None,
                 progress: Any) -> list[NodeRevert]:
    """The entries reverted (or planned, without ``run_id``) in this process, or over
    ``--workers`` processes (default: as the migration picks for that many nodes)."""
    workers = args.workers or parallel.auto_workers(len(keys))
    if workers <= 1:
        return Reverter(direct, run_id=run_id, progress=progress).revert(keys)
    opener = functools.partial(open_database, list(args.config_files))
    return revert_in_workers(opener, keys, run_id=run_id, workers=workers, progress=progress)


def write_report(run_id: str, revert_id: str | None, dry_run: bool,
                 results: Sequence[NodeRevert], names: Sequence[str], output_format: str,
                 out: TextIO) -> None:
    """Each node's outcome (and, for JSON, its changes), then the custom names."""
    if output_format == "json":
        json.dump({"run": run_id, "revert_run": revert_id, "dry_run": dry_run,
                   "nodes": [result.to_dict() for result in results],
                   "custom_names": list(names)}, out, indent=2)
        out.write("\n")
        return
    for result in results:
        detail = result.reason or (summary(result.changes) if result.changes else "")
        out.write(f"{result.nodename}: {result.status}" + (f": {detail}" if detail else "")
                  + "\n")
    verb = "would delete, where unused" if dry_run else "deleted"
    for name in names:
        out.write(f"custom {name}: {verb}\n")
    if revert_id:
        out.write(f"revert run {revert_id} (revertable: placement revert {revert_id})\n")
