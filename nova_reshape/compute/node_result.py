"""What a migration run reports per node: its status and compact result.

Kept apart from the run (:mod:`nova_reshape.compute.migrate`, which
re-exports these names) because a result is what outlives the node: one per
node until the report, sent from parallel workers to the parent, so it holds
no trees, only what the report prints.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from typing import Any

from nova_reshape.compute import invariants, preflight
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move


class NodeStatus(enum.StrEnum):
    """What happened to one node.

    A ``StrEnum``: members compare equal to their values and serialise as
    them, so the JSON report and the summary's keys are these strings.
    """

    SKIPPED = "skipped"          # ironic
    UNCHANGED = "unchanged"      # already in the new shape: nothing written
    MIGRATED = "migrated"        # allocations moved (one POST /reshaper)
    UPDATED = "updated"          # written without moving allocations (traits, inventory)
    WOULD_MIGRATE = "would-migrate"  # dry run
    WOULD_UPDATE = "would-update"    # dry run
    REFUSED = "refused"          # pre-flight findings
    NOT_RUN = "not-run"          # another node was refused or failed first
    CONFLICT = "conflict"        # generation conflicts left after the tracker's retries
    FAILED = "failed"
    INVARIANT = "invariant-violated"


#: Module-level names of the statuses, for the callers that use them
#: (``cmd/manage.py`` maps them to exit codes) and the code below.
SKIPPED = NodeStatus.SKIPPED
UNCHANGED = NodeStatus.UNCHANGED
MIGRATED = NodeStatus.MIGRATED
UPDATED = NodeStatus.UPDATED
WOULD_MIGRATE = NodeStatus.WOULD_MIGRATE
WOULD_UPDATE = NodeStatus.WOULD_UPDATE
REFUSED = NodeStatus.REFUSED
NOT_RUN = NodeStatus.NOT_RUN
CONFLICT = NodeStatus.CONFLICT
FAILED = NodeStatus.FAILED
INVARIANT = NodeStatus.INVARIANT

#: Outcomes after which no further node is written.
STOPPING = frozenset({NodeStatus.FAILED, NodeStatus.INVARIANT})


@dataclasses.dataclass
class NodeResult:
    """What happened to one node, in compact form: what the report prints.

    No trees and no simulation: a run keeps one of these per node until the
    end (and a parallel worker sends each to the parent as the node
    finishes), so their size is what grows with the number of nodes.
    ``detail`` is what the run's ``show`` callback rendered from the node's
    trees and plan when the output needs them (``--dry-run``,
    ``--verbose``, ``--format json``); None otherwise.
    """

    nodename: str
    status: NodeStatus
    root: str | None = None
    findings: list[preflight.Finding] = dataclasses.field(default_factory=list)
    moves: list[Move] = dataclasses.field(default_factory=list)
    violations: list[invariants.Violation] = dataclasses.field(default_factory=list)
    error: str | None = None
    calls: int = 0
    #: Placement requests other than GET (0 for an unchanged node).
    writes: int = 0
    #: What ``show`` made of the node's trees and plan (None without ``show``).
    detail: Any = None
    #: The node's position in the order the host descriptions give the nodes
    #: (results arrive in the order nodes finish; the report sorts by this).
    order: int = 0


#: Renders what the report shows of one node beyond its line, from its result,
#: its simulation (the last one planned) and its tree as read back after the
#: write (None when not read back). Must pickle for parallel workers: a
#: module-level function or a ``functools.partial`` of one.
Show = Callable[[NodeResult, preflight.Simulation, ProviderTree | None], Any]

#: Called once per node with its final result.
Finished = Callable[[NodeResult], None]


def summarize(results: Sequence[NodeResult]) -> dict[NodeStatus, int]:
    """status -> number of nodes."""
    counts: dict[NodeStatus, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return counts
