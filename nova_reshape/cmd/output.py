"""What ``migrate_compute_inventory`` prints: the report (text or JSON), refusals, warnings.

The per-node detail (trees, moves, plan) is drawn by
:mod:`nova_reshape.cmd.render` as each node finishes (:func:`show_for`);
this module writes the whole report from the nodes' compact results, and
the lines of a refusal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from nova_reshape.cmd import refusal as exits
from nova_reshape.cmd import render
from nova_reshape.cmd.refusal import PROGRAM, Details, Refusal
from nova_reshape.cmd.request import MigrateRequest, OutputFormat
from nova_reshape.compute import migrate

NUMA_WARNING = ("warning: --numa-in-placement: no nova release up to {number} models NUMA "
                "cells in Placement; its compute service will put VCPU, PCPU and MEMORY_MB "
                "back on the compute node's root provider at start\n")

#: The report's last sentence per exit status.
_VERDICTS = {
    exits.EXIT_REFUSED: "refused by the pre-flight checks: nothing was written; fix the "
                  "findings above and run again",
    exits.EXIT_CONFLICT: "conflicts remained on some nodes (is another writer running?); "
                   "run again",
    exits.EXIT_FAILED: "a node failed; the nodes before it are done; run again after fixing",
    exits.EXIT_INVARIANT: "a node's write broke an invariant and the run stopped (the node's "
                    "line says whether its write was rolled back)",
}


def show_for(request: MigrateRequest) -> migrate.Show | None:
    """What each node's result keeps of its trees and plan for the report: the
    drawn lines for text with ``--dry-run`` or ``--verbose``, the JSON parts
    for ``--format json``, nothing otherwise (picklable, for the workers)."""
    if request.output_format == OutputFormat.JSON:
        return render.node_json
    return render.node_text if request.detailed else None


def write_report(request: MigrateRequest, results: Sequence[migrate.NodeResult], code: int,
                 out: TextIO, details: Details | None = None) -> None:
    """The run's report in the requested format; ``details`` (the scheduling check's)
    after the text report, or as keys of the JSON document."""
    details = details or Details()
    if request.output_format == OutputFormat.JSON:
        write_json(results, code, request.dry_run, out, details.document)
    else:
        write_text(results, code, request.dry_run, request.detailed, out, details.lines)


def _node_line(result: migrate.NodeResult) -> str:
    line = f"{result.nodename}: {result.status}"
    if result.status == migrate.SKIPPED:
        line += " (ironic)"
    if result.moves:
        line += f", {len(result.moves)} allocation changes"
    if result.calls:
        line += f" ({result.calls} Placement calls)"
    if result.error:
        line += f": {result.error}"
    return line


def write_text(results: Sequence[migrate.NodeResult], code: int, dry_run: bool,
               detailed: bool, out: TextIO, extra: Sequence[str] = ()) -> None:
    """Each node's line (and findings, violations, detail), ``extra`` lines, then the
    summary and verdict as the last line."""
    for result in results:
        out.write(_node_line(result) + "\n")
        for finding in result.findings:
            out.write(f"  {finding}\n")
        for violation in result.violations:
            out.write(f"  invariant {violation}\n")
        if detailed and result.detail is not None:
            out.writelines(f"{line}\n" for line in result.detail)
    out.writelines(f"{line}\n" for line in extra)
    summary = ", ".join(f"{count} {status}"
                        for status, count in sorted(migrate.summarize(results).items()))
    out.write(f"{summary or 'no nodes'}. {verdict(code, dry_run).capitalize()}.\n")


def verdict(code: int, dry_run: bool) -> str:
    """The report's last sentence for the run's exit status."""
    if code == exits.EXIT_OK:
        return "dry run: nothing changed" if dry_run else "done"
    return _VERDICTS[code]


def write_json(results: Sequence[migrate.NodeResult], code: int, dry_run: bool,
               out: TextIO, extra: Mapping[str, Any] | None = None) -> None:
    nodes = []
    for result in results:
        detail = result.detail or {"moves": [render.move_json(move, {})
                                             for move in result.moves],
                                   "before": None, "after": None, "plan": None,
                                   "left_to_neutron": []}
        nodes.append({
            "nodename": result.nodename, "status": result.status, "root": result.root,
            "calls": result.calls, "error": result.error,
            "findings": [finding.as_dict() for finding in result.findings],
            "violations": [vars(violation) for violation in result.violations],
            "writes": result.writes, **detail,
        })
    json.dump({"dry_run": dry_run, "exit_code": code, "summary": migrate.summarize(results),
               "nodes": nodes, **(extra or {})}, out, indent=2, sort_keys=True)
    out.write("\n")


def write_refusal(refusal: Refusal, request: MigrateRequest | None, out: TextIO,
                  err: TextIO) -> None:
    """A refusal: with findings, each on a line then ``refused: <message>`` (text) or
    one JSON document on ``out``; otherwise its one line on ``err`` and, for
    ``--format json``, a JSON document with the ``error`` on ``out`` too."""
    as_json = request is not None and request.output_format == OutputFormat.JSON
    if not refusal.findings:
        err.write(f"{PROGRAM}: error: {refusal.message}\n")
    if as_json:
        document = {"dry_run": request.dry_run, "exit_code": refusal.exit_code,
                    "findings": [finding.as_dict() for finding in refusal.findings],
                    **refusal.details.document}
        if not refusal.findings:
            document["error"] = refusal.message
        json.dump(document, out, indent=2)
        out.write("\n")
    elif refusal.findings:
        out.writelines(f"{line}\n" for line in refusal.details.lines)
        out.writelines(f"{finding}\n" for finding in refusal.findings)
        out.write(f"refused: {refusal.message}\n")


def write_sources(sources: Mapping[str, Mapping[str, Sequence[str]]], out: TextIO) -> None:
    """Per node, each fact and where it came from."""
    for nodename, facts in sources.items():
        out.write(f"{nodename}: facts from\n")
        for fact, names in facts.items():
            out.write(f"  {fact}: {', '.join(names)}\n")
