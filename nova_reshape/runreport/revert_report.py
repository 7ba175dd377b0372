"""The report of a ``placement revert``: one self-contained HTML page, or JSON.

``placement revert RUN_ID --report FILE.html|FILE.json`` (docs/journal.md):
the revert's facts (the run reverted, the revert's own run, the journal,
the exit status), the nodes counted by outcome, then every node with its
outcome (``reverted``, ``would-revert``, ``already-reverted``,
``refused`` with its one line, ...), what was written, and its tree before
and after the revert in outline
(:func:`~nova_reshape.journal.plan.outline`). A revert's nodes are
already held in memory by the command, so the file is written in one go
from the shipped template ``revert.html.j2`` (autoescaped).
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Sequence
from typing import Any, TextIO

from nova_reshape.journal.plan import summary
from nova_reshape.journal.revert import NodeRevert, RevertStatus
from nova_reshape.runreport.writers import environment


@dataclasses.dataclass(frozen=True)
class RevertFacts:
    """What the report says about the revert as a whole."""

    run: str
    revert_run: str | None
    dry_run: bool
    journal: str
    hosts: list[str]
    exit_code: int
    exit_class: str
    written_at: str


def counts(results: Sequence[NodeRevert]) -> dict[str, int]:
    """Nodes by outcome, in the order of :class:`RevertStatus`, the ones with none left out."""
    found = collections.Counter(str(result.status) for result in results)
    return {str(status): found[str(status)] for status in RevertStatus if found[str(status)]}


def node_row(result: NodeRevert) -> dict[str, Any]:
    """One node as the page shows it."""
    return result.to_dict() | {"summary": summary(result.changes) if result.changes else ""}


def write(path: str, stream: TextIO, facts: RevertFacts, results: Sequence[NodeRevert],
          names: Sequence[str]) -> None:
    """The report on ``stream``: JSON when ``path`` ends in ``.json``, else HTML."""
    if path.lower().endswith(".json"):
        json.dump({"report": "revert", "run": dataclasses.asdict(facts),
                   "counts": counts(results),
                   "nodes": [result.to_dict() for result in results],
                   "custom_names": list(names)}, stream, indent=1)
        stream.write("\n")
        return
    stream.write(environment().get_template("revert.html.j2").render(
        facts=facts, counts=counts(results), nodes=[node_row(r) for r in results],
        names=list(names)))
