"""The report of one run, fed by the run's callbacks and written as nodes finish.

:class:`RunReport` gives the run its ``show`` (:meth:`RunReport.show`:
each node's trees reduced while they exist) and takes each finished node
(:meth:`RunReport.finished`: its entry buffered, the batch written when
full, its capacity added to the cloud's sums); :meth:`RunReport.close`
writes the end. It holds a batch of entries, the counts, the cloud's sums
and the refused nodes' one-line reasons: never every node.
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.compute.node_result import NodeResult, Show
from nova_reshape.runreport import capacity, records
from nova_reshape.runreport.writers import ReportWriter

#: Nodes per chunk of the file (one JSON script element each in HTML).
CHUNK_SIZE = 200


@dataclasses.dataclass(frozen=True)
class SchedulingTable:
    """The scheduling check's per-flavor table, shown only when a run has one
    (``migrate_compute_inventory``'s check, :mod:`nova_reshape.cmd.scheduling`)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str | int | float, ...], ...]


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """What the report says about the run before any node: the target release,
    whether it is a dry run, and the inputs (name, value) as the operator gave them
    (passwords hidden by the caller)."""

    target: str
    dry_run: bool
    inputs: tuple[tuple[str, str], ...]
    started: str


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How the run ended: its exit status, the status's class and the verdict."""

    exit_code: int
    exit_class: str
    verdict: str


class RunReport:
    """One run's report through ``writer``; ``exit_of_status`` says which exit status
    each node status leads to (0 when absent)."""

    def __init__(self, writer: ReportWriter, facts: RunFacts,
                 exit_of_status: Mapping[str, int],
                 scheduling: SchedulingTable | None = None,
                 chunk_size: int = CHUNK_SIZE) -> None:
        self.writer = writer
        self.facts = facts
        self.exit_of_status = dict(exit_of_status)
        self.scheduling = scheduling
        self.chunk_size = chunk_size
        self.cloud = capacity.CloudCapacity()
        self.counts: dict[str, int] = {}
        self.refusals: list[dict[str, Any]] = []
        self.read = 0
        self.buffer: list[dict[str, Any]] = []
        self.chunks = 0
        self.clock = time.monotonic()
        #: Where the nodes' drawings wait between their check and their entry.
        self._spool_directory = tempfile.TemporaryDirectory(prefix="nova-reshape-report-")
        self.spool = records.Spool(self._spool_directory.name)
        writer.start(dataclasses.asdict(facts))

    def show(self, inner: Show | None) -> Show:
        """The run's ``show``: ``inner`` (the output's) plus the report's detail."""
        return functools.partial(records.recorded, self.spool, inner)

    def finished(self, result: NodeResult) -> None:
        """One node is final: count it, sum its capacity, buffer its entry."""
        detail = records.take_detail(result)
        status = str(result.status)
        self.counts[status] = self.counts.get(status, 0) + 1
        if detail is not None:
            self.read += 1
            self.cloud.add(detail.before, records.after_sums(result, detail))
        if result.findings:
            first = result.findings[0]
            self.refusals.append({"node": result.nodename, "code": first.code,
                                  "message": first.message, "fix": first.fix,
                                  "findings": len(result.findings)})
        self.buffer.append(records.entry(result, detail, self.facts.dry_run))
        if len(self.buffer) >= self.chunk_size:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.writer.nodes(self.chunks, self.buffer)
            self.chunks += 1
            self.buffer = []

    def close(self, outcome: Outcome) -> None:
        """Write the buffered nodes and the end of the report; drop the spool."""
        self.flush()
        self.spool.close()
        self._spool_directory.cleanup()
        self.writer.end({
            "outcome": {**dataclasses.asdict(outcome),
                        "seconds": round(time.monotonic() - self.clock, 3)},
            "summary": {"nodes": sum(self.counts.values()), "read": self.read,
                        "counts": [{"status": status, "nodes": count,
                                    "exit_code": self.exit_of_status.get(status, 0)}
                                   for status, count in sorted(self.counts.items())]},
            "capacity": capacity_rows(self.cloud.rows()),
            "refusals": self.refusals,
            "scheduling": (dataclasses.asdict(self.scheduling)
                           if self.scheduling is not None else None),
        })


def capacity_rows(rows: Sequence[capacity.CapacityRow]) -> list[dict[str, Any]]:
    """The capacity rows as plain data (the JSON report's, the template's)."""
    return [{"group": row.group, "before": row.before._asdict(),
             "after": row.after._asdict(), "mark": str(row.mark),
             "differs": capacity.differs(row.before, row.after)} for row in rows]
