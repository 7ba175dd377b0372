"""``placement revert RUN_ID --journal FILE --placement-url URL``: a run made over HTTP, put back.

The run's nodes come from its journal file
(:mod:`nova_reshape.journal.journal_file`), Placement is read and written
through the API (:class:`~nova_reshape.journal.http_revert.HttpReverter`),
one node after the other, and the revert is itself a run in that file
(journaled in two steps per node, so it can be reverted in turn, over HTTP
too). Same options, output, report file and exit statuses as the
in-process revert (:mod:`nova_reshape.cmd.revert`); ``--workers`` does
not apply (one process: Placement's own workers serve the requests).

Bad input (exit 2), each one line, nothing created: ``--journal`` without
``--placement-url`` or the other way round, a journal file missing, not a
journal or (for a real revert) not writable, an unknown run id, a
``--host`` the run never changed.
"""

from __future__ import annotations

import collections
from typing import Any, TextIO

from nova_reshape import journal
from nova_reshape.cmd import runs
from nova_reshape.cmd.placement_access import placement_opener
from nova_reshape.cmd.placement_db import bad_input
from nova_reshape.cmd.request import PlacementAccess
from nova_reshape.cmd.revert_output import outcome, report_revert
from nova_reshape.journal import http_io, journal_file, names
from nova_reshape.journal.http_revert import HttpReverter
from nova_reshape.journal.revert import selected
from nova_reshape.progress import progress_callback

COMMAND = "revert"


def revert_command(args: Any, access: PlacementAccess, out: TextIO, err: TextIO) -> int:
    """The revert over HTTP (see the module docstring); its exit status."""
    if not access.url:
        raise bad_input("--journal reverts a run made over --placement-url: give "
                        "--placement-url URL too (in-process runs are reverted with "
                        "--config-file, from the Placement database's journal)")
    if not args.journal:
        raise bad_input("a revert over --placement-url reads the run's journal file: give "
                        "--journal FILE (the migration named it on stderr)")
    with runs.file_engine(args.journal, write=not args.dry_run) as engine:
        run = runs.find_run(engine, args.run_id, f"journal file {args.journal}")
        keys = selected(journal_file.entry_keys(engine, run.id), args.hosts)
        if args.hosts and not keys:
            raise bad_input(f"run {run.id} changed no node of {', '.join(args.hosts)}")
        progress = progress_callback(err, args.output_format, force=args.progress)
        before_names = run.inputs.get(names.INPUT_KEY)
        with placement_opener(access)() as placement:
            if args.dry_run:
                results = HttpReverter(placement, engine, run_id=None,
                                       progress=progress).revert(keys)
                forgotten = http_io.forget_unused(placement, before_names, dry_run=True)
                revert_id = None
            else:
                with journal.recording(engine, COMMAND,
                                       journal.command_line(getattr(args, "argv", [])),
                                       {"run": run.id, "hosts": list(args.hosts)},
                                       reverts=run.id,
                                       custom_names=http_io.custom_names(placement)) as recorder:
                    revert_id = recorder.run_id
                    results = HttpReverter(placement, engine, run_id=revert_id,
                                           progress=progress).revert(keys)
                    forgotten = http_io.forget_unused(placement, before_names, dry_run=False)
                    recorder.finish(outcome(results)[1],
                                    collections.Counter(str(r.status) for r in results))
    return report_revert(args, run.id, revert_id, results, forgotten, out)
