"""What ``migrate_compute_inventory`` prints: the report (text or JSON), refusals, warnings.

The per-node detail (trees, moves, plan) is drawn by
:mod:`nova_reshape.cmd.render` as each node finishes (:func:`show_for`);
this module writes the whole report from the nodes' compact results, and
the lines of a refusal.
"""

from __future__ import annotations

import array
import io
import json
import tempfile
from collections.abc import Iterator, Mapping, Sequence
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
    """The run's report in the requested format, from results all at hand; ``details``
    (the scheduling check's) after the text report, or as keys of the JSON document."""
    with ReportSpool(request) as entries:
        for result in results:
            entries(result)
        entries.write(code, out, details)


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


def text_entry(result: migrate.NodeResult, detailed: bool) -> str:
    """A node's lines in the text report."""
    lines = [_node_line(result)]
    lines += [f"  {finding}" for finding in result.findings]
    lines += [f"  invariant {violation}" for violation in result.violations]
    if detailed and result.detail is not None:
        lines += list(result.detail)
    return "".join(f"{line}\n" for line in lines)


def json_entry(result: migrate.NodeResult) -> dict[str, Any]:
    """A node's object in the JSON report."""
    detail = result.detail or {"moves": [render.move_json(move, {}) for move in result.moves],
                               "before": None, "after": None, "plan": None,
                               "left_to_neutron": []}
    return {
        "nodename": result.nodename, "status": result.status, "root": result.root,
        "calls": result.calls, "error": result.error,
        "findings": [finding.as_dict() for finding in result.findings],
        "violations": [vars(violation) for violation in result.violations],
        "writes": result.writes, **detail,
    }


class ReportSpool:
    """The report, written as nodes finish: a ``finished`` callback.

    Each node's entry (its text lines, or its JSON object, drawn trees and
    plan included) is rendered as the node's result arrives and appended to
    an unnamed temporary file; what stays in memory is the entry's place
    (two integers per node, by the node's position in the description
    order) and a count per status. :meth:`write` copies the entries to the
    output in the description order, whatever order the nodes finished in,
    with the summary: the same text or JSON document as if every result had
    been held.
    """

    def __init__(self, request: MigrateRequest) -> None:
        self.as_json = request.output_format == OutputFormat.JSON
        self.dry_run = request.dry_run
        self.detailed = request.detailed
        self.counts: dict[migrate.NodeStatus, int] = {}
        self._offsets = array.array("q")
        self._lengths = array.array("q")
        self._file = tempfile.TemporaryFile(prefix="nova-reshape-report-")

    def __enter__(self) -> ReportSpool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._file.close()

    def __call__(self, result: migrate.NodeResult) -> None:
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if self.as_json:
            entry = json.dumps(json_entry(result), indent=2, sort_keys=True)
            text = "".join(f"    {line}\n" for line in entry.splitlines())
        else:
            text = text_entry(result, self.detailed)
        data = text.encode("utf-8")
        missing = result.order + 1 - len(self._offsets)
        if missing > 0:
            self._offsets.extend([-1] * missing)
            self._lengths.extend([0] * missing)
        self._file.seek(0, io.SEEK_END)
        self._offsets[result.order] = self._file.tell()
        self._lengths[result.order] = len(data)
        self._file.write(data)

    def exit_code(self) -> int:
        """The run's exit status from the statuses seen."""
        return exits.exit_for(self.counts)

    def _entries(self) -> Iterator[str]:
        for offset, length in zip(self._offsets, self._lengths, strict=True):
            if offset >= 0:
                self._file.seek(offset)
                yield self._file.read(length).decode("utf-8")

    def write(self, code: int, out: TextIO, details: Details | None = None) -> None:
        """The whole report on ``out``; ``details`` (the scheduling check's) after the
        nodes in text, or as more keys of the JSON document."""
        details = details or Details()
        if self.as_json:
            self._write_json(code, out, details.document)
            return
        for entry in self._entries():
            out.write(entry)
        out.writelines(f"{line}\n" for line in details.lines)
        summary = ", ".join(f"{count} {status}" for status, count in sorted(self.counts.items()))
        out.write(f"{summary or 'no nodes'}. {verdict(code, self.dry_run).capitalize()}.\n")

    def _write_json(self, code: int, out: TextIO, extra: Mapping[str, Any]) -> None:
        """What ``json.dump(document, indent=2, sort_keys=True)`` writes, the nodes one
        at a time."""
        document = {"dry_run": self.dry_run, "exit_code": code, "summary": self.counts,
                    "nodes": None, **extra}
        separator = "{"
        for key in sorted(document):
            out.write(f"{separator}\n  {json.dumps(key)}: ")
            separator = ","
            if key == "nodes":
                self._write_nodes(out)
            else:
                out.write(json.dumps(document[key], indent=2, sort_keys=True)
                          .replace("\n", "\n  "))
        out.write("\n}\n")

    def _write_nodes(self, out: TextIO) -> None:
        out.write("[")
        separator = "\n"
        for entry in self._entries():
            out.write(separator + entry.rstrip("\n"))
            separator = ",\n"
        out.write("\n  ]" if separator != "\n" else "]")


def verdict(code: int, dry_run: bool) -> str:
    """The report's last sentence for the run's exit status."""
    if code == exits.EXIT_OK:
        return "dry run: nothing changed" if dry_run else "done"
    return _VERDICTS[code]


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
