"""What ``placement revert`` prints and the report file it writes, in-process or over HTTP.

One place for both ways of reverting: the exit status of the nodes'
outcomes (:func:`outcome`, the migration's classes), the text or JSON on
stdout (:func:`write_report`), and ``--report FILE.html|FILE.json``
(:mod:`nova_reshape.runreport.revert_report`): every node reverted,
refused (with its one line), already reverted, failed..., each with its
tree before and after the revert in outline.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Any, TextIO

from nova_reshape.cmd.refusal import (
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_INVARIANT,
    EXIT_NAMES,
    EXIT_OK,
    EXIT_REFUSED,
    ExitClass,
    Refusal,
)
from nova_reshape.cmd.report_file import check_report_path
from nova_reshape.journal import RunStatus
from nova_reshape.journal.plan import summary
from nova_reshape.journal.revert import NodeRevert, RevertStatus
from nova_reshape.runreport import revert_report

#: The exit status each node outcome leads to, most severe first.
STATUS_EXITS = ((RevertStatus.REFUSED, EXIT_REFUSED, RunStatus.REFUSED),
                (RevertStatus.INVARIANT, EXIT_INVARIANT, RunStatus.INVARIANT),
                (RevertStatus.FAILED, EXIT_FAILED, RunStatus.FAILED),
                (RevertStatus.CONFLICT, EXIT_CONFLICT, RunStatus.CONFLICT))


def outcome(results: Sequence[NodeRevert]) -> tuple[int, RunStatus]:
    """The exit status and the journal status of a revert's node outcomes."""
    found = {result.status for result in results}
    return next(((code, status) for node, code, status in STATUS_EXITS if node in found),
                (EXIT_OK, RunStatus.OK))


def add_report_argument(parser: Any) -> None:
    """``--report FILE``: the revert's report file."""
    parser.add_argument("--report", metavar="FILE",
                        help="also write the revert's report to FILE: one self-contained "
                        "HTML page, or JSON when FILE ends in .json")


def check_report(path: str | None) -> None:
    """A refusal (bad input) for a ``--report`` path that cannot be written."""
    check_report_path(path)


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


def report_revert(args: Any, run_id: str, revert_id: str | None,
                  results: Sequence[NodeRevert], names: Sequence[str], out: TextIO) -> int:
    """The revert's output on ``out`` and, with ``--report``, its report file; the
    exit status."""
    code, _ = outcome(results)
    write_report(run_id, revert_id, args.dry_run, results, names, args.output_format, out)
    if args.report:
        facts = revert_report.RevertFacts(
            run=run_id, revert_run=revert_id, dry_run=args.dry_run,
            journal=getattr(args, "journal", None) or "the Placement database",
            hosts=list(args.hosts), exit_code=code, exit_class=EXIT_NAMES[code],
            written_at=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
        try:
            with open(args.report, "w", encoding="utf-8") as stream:
                revert_report.write(args.report, stream, facts, results, names)
        except OSError as error:
            raise Refusal(ExitClass.FAILED, f"--report {args.report}: cannot write: "
                          f"{error.strerror}; the revert itself is done") from error
    return code
