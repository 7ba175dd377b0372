"""heal_allocations: the allocations nova 34's ``nova-manage placement heal_allocations``
writes, decided from every cell's instances and Placement's consumers read in bulk.

nova walks each cell but cell0 (in ``cell_mappings`` order), its live
instances oldest first in pages, reads each instance's allocations and
heals it (one API round trip per instance). Here the cells come read
(:mod:`nova_reshape.novadb.cells`) and the allocations from one bulk read
(:class:`~nova_reshape.consistency.placement_io.PlacementState`); the same
decisions are taken in the same order, and only the writes go to
Placement, in batches. Per instance, in nova's order:

1. a task state, or no node: skipped;
2. a flavor asking ``resources:VGPU`` or a Cyborg device profile: the run
   stops, exit 8 (:mod:`.resources`), before the allocations are looked
   at; with ``heal_nested`` a vGPU flavor is healed onto the tree
   (:mod:`.nested`);
3. no allocations: the embedded flavor's resources on the compute node
   provider of the instance's host and node (none: the run stops, exit 2);
4. allocations whose consumer's project or user is not the instance's: the
   same allocations rewritten with the instance's (nested and shared ones
   included, untouched otherwise);
5. ``force`` (with one instance): the flavor's allocation replaces
   whatever the consumer holds, wherever it is;
6. otherwise nothing: an allocation on another host stays.

``max_count`` follows nova's pages exactly: a cell's instances are taken
``max_count - healed so far`` at a time, the cell is left once its count
equals that number, and the run ends with exit 1 when the total equals
``max_count`` (without ``max_count`` pages are 50 long and a total of
exactly 50 after a cell ends the run with exit 1 too, as nova does).
``dry_run`` counts nothing, so it always ends with 4 unless a stop comes
first. :func:`missing_allocations` is the read-only check of the same rules.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from nova_reshape.consistency import nested, placement_io
from nova_reshape.consistency.journaled_writes import JournaledWrites, Touch
from nova_reshape.consistency.resources import (
    FlavorError,
    Unhealable,
    flavor_request,
    unhealable,
)
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.novadb.cells import CellRead
from nova_reshape.novadb.records import ComputeNodeRecord

#: nova's page length without ``--max-count``.
PAGE = 50


class Outcome(enum.IntEnum):
    """nova 34's exit statuses of heal_allocations."""

    HEALED = 0
    MAX_COUNT = 1
    NO_NODE = 2
    REFUSED = 3
    NOTHING = 4
    UNSUPPORTED = 8
    BAD_INPUT = 127


class Change(enum.StrEnum):
    """What a heal does to the consumer."""

    CREATE = "create"
    UPDATE = "update"


@dataclasses.dataclass(frozen=True)
class Options:
    """One run as asked: ``instance`` (one uuid) or ``max_count`` limit it."""

    dry_run: bool = False
    instance: str | None = None
    max_count: int | None = None
    force: bool = False
    heal_nested: bool = False


@dataclasses.dataclass(frozen=True)
class Heal:
    """One instance's write: its ``PUT /allocations/{instance}`` body at 1.28."""

    instance: str
    cell: str
    change: Change
    body: Mapping[str, Any]
    host: str | None = None

    def line(self, dry_run: bool) -> str:
        verb = "would be" if dry_run else "to be"
        return (f"allocations of instance {self.instance} in cell {self.cell} {verb} "
                f"{self.change}d: {json.dumps(self.body, sort_keys=True)}")


@dataclasses.dataclass(frozen=True)
class Stop:
    """What ended the run early: its exit status and the one line saying why."""

    outcome: Outcome
    message: str
    instance: str | None = None


class _Stopped(Exception):
    def __init__(self, stop: Stop) -> None:
        super().__init__(stop.message)
        self.stop = stop


@dataclasses.dataclass
class Plan:
    """The heals in nova's order, what verbose output says, and how the run ends
    if every write succeeds."""

    heals: list[Heal] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    outcome: Outcome = Outcome.NOTHING
    stop: Stop | None = None


class Allocations(Protocol):
    """Placement's side as the decisions read it (:class:`placement_io.PlacementState`)."""

    def allocations_of(self, consumer: str) -> Mapping[str, Any]: ...

    def tree(self, root: str) -> nested.TreeView | None: ...


def ordered(read: CellRead, instance: str | None = None) -> list[InstanceRecord]:
    """The cell's live instances (only ``instance`` when given) oldest first, then by id."""
    found = [item for item in read.snapshot.instances
             if instance is None or item.uuid == instance]
    return sorted(found, key=lambda item: (item.created_at is not None, item.created_at
                                           or 0))


class _Planner:
    """The decisions of one run, instance by instance (see the module)."""

    def __init__(self, state: Allocations, options: Options) -> None:
        self.state = state
        self.options = options
        self.plan = Plan()
        self.nodes: dict[str, dict[tuple[str, str], ComputeNodeRecord]] = {}

    def note(self, line: str) -> None:
        self.plan.notes.append(line)

    def run(self, cells: Sequence[CellRead]) -> Plan:
        try:
            self.plan.outcome = self._cells(cells)
        except _Stopped as stopped:
            self.plan.stop = stopped.stop
            self.plan.outcome = stopped.stop.outcome
        return self.plan

    def _cells(self, cells: Sequence[CellRead]) -> Outcome:
        options = self.options
        unlimited = options.max_count is None and options.instance is None
        max_count = 1 if options.instance else (options.max_count or PAGE)
        processed = 0
        for read in cells:
            self.note(f"looking for instances in cell {read.cell.label}")
            limit = max_count if unlimited else max_count - processed
            processed += self._cell(read, limit, unlimited)
            if processed == max_count and not options.instance:
                self.note(f"max count reached: {processed} instance(s) healed")
                return Outcome.MAX_COUNT
        return Outcome.HEALED if processed else Outcome.NOTHING

    def _cell(self, read: CellRead, limit: int, unlimited: bool) -> int:
        instances = ordered(read, self.options.instance)
        # A limit of 0 or less only follows a cell whose pages overshot; nova then
        # asks its database for a negative limit, which SQLite reads as none.
        size = limit if limit > 0 else max(len(instances), 1)
        counted = 0
        for start in range(0, len(instances), size):
            for instance in instances[start:start + size]:
                heal = self.verdict(read, instance)
                if heal is not None:
                    self.plan.heals.append(heal)
                    self.note(heal.line(self.options.dry_run))
                    counted += 0 if self.options.dry_run else 1
            if (not unlimited and counted == limit) or self.options.instance:
                return counted
        return counted

    def verdict(self, read: CellRead, instance: InstanceRecord) -> Heal | None:
        """The instance's heal, None when it needs none; raises _Stopped."""
        if instance.task_state is not None:
            self.note(f"instance {instance.uuid} is in task state {instance.task_state}; "
                      "skipped")
            return None
        if instance.node is None:
            self.note(f"instance {instance.uuid} is on no node; skipped")
            return None
        self._check_supported(instance)
        current = self.state.allocations_of(instance.uuid)
        change, body = None, None
        if not current.get("allocations"):
            change, body = Change.CREATE, self._flavor_body(read, instance, None)
        elif (current.get("project_id") != instance.project_id
              or current.get("user_id") != instance.user_id):
            change = Change.UPDATE
            body = placement_io.allocation_body(
                placement_io.resources_of(current), instance.project_id, instance.user_id,
                current.get("consumer_generation"))
        if self.options.force:
            self.note(f"--force: instance {instance.uuid} gets its flavor's allocation")
            change = Change.UPDATE
            body = self._flavor_body(read, instance, current.get("consumer_generation"))
        if change is None or body is None:
            self.note(f"allocations of instance {instance.uuid} are up to date")
            return None
        return Heal(instance.uuid, read.cell.label, change, body, instance.host)

    def _check_supported(self, instance: InstanceRecord) -> None:
        kind = unhealable(instance)
        if kind is Unhealable.VGPU and not self.options.heal_nested:
            raise _Stopped(Stop(Outcome.UNSUPPORTED, (
                f"instance {instance.uuid} asks for vGPU (resources:VGPU): nova cannot heal "
                "it; --heal-nested heals it onto the GPU providers"), instance.uuid))
        if kind is Unhealable.DEVICE_PROFILE:
            raise _Stopped(Stop(Outcome.UNSUPPORTED, (
                f"instance {instance.uuid} asks for a Cyborg device profile "
                "(accel:device_profile): its accelerator requests are Cyborg's, "
                "not healed offline"), instance.uuid))

    def _node(self, read: CellRead, instance: InstanceRecord) -> ComputeNodeRecord:
        nodes = self.nodes.get(read.cell.uuid)
        if nodes is None:
            nodes = self.nodes[read.cell.uuid] = {
                node.key: node for node in read.snapshot.compute_nodes}
        node = nodes.get((instance.host or "", instance.node or ""))
        if node is None or not node.uuid:
            raise _Stopped(Stop(Outcome.NO_NODE, (
                f"instance {instance.uuid}: no compute node {instance.node} of host "
                f"{instance.host} in cell {read.cell.label}"), instance.uuid))
        return node

    def _flavor_body(self, read: CellRead, instance: InstanceRecord,
                     generation: int | None) -> dict[str, Any]:
        node = self._node(read, instance)
        try:
            request = flavor_request(instance, read.snapshot.volume_backed(instance))
        except FlavorError as error:
            raise _Stopped(Stop(Outcome.REFUSED, str(error), instance.uuid)) from error
        allocations = {node.uuid or "": request.merged_resources()}
        tree = self.state.tree(node.uuid or "") if self.options.heal_nested else None
        if tree is not None:
            held = [device for device in read.snapshot.pci_devices_of(node)
                    if device.instance_uuid == instance.uuid]
            allocations = nested.place(request, tree, node.hypervisor_hostname, held)
        return placement_io.allocation_body(allocations, instance.project_id,
                                            instance.user_id, generation)


def plan(cells: Sequence[CellRead], state: Allocations, options: Options) -> Plan:
    """Every decision of the run, nothing written (see the module)."""
    return _Planner(state, options).run(cells)


@dataclasses.dataclass(frozen=True)
class Result:
    """A finished run: its exit status, the line that explains an early end, the
    plan and how many heals were written."""

    outcome: Outcome
    plan: Plan
    written: int = 0
    message: str | None = None


def heal(cells: Sequence[CellRead], placement: Any, options: Options,
         done: Callable[[int, int], None] | None = None,
         writes: JournaledWrites | None = None) -> Result:
    """Decide, then (unless ``dry_run``) write in order; a write Placement refuses
    ends the run there with exit 3, the instances before it written. ``writes``
    (in-process on the database): the writes go through it, each node journaled."""
    state = placement_io.PlacementState(placement, trees=options.heal_nested)
    decided = plan(cells, state, options)
    stop_line = decided.stop.message if decided.stop else None
    if options.dry_run or not decided.heals:
        return Result(decided.outcome, decided, 0, stop_line)
    if writes is not None:
        written = placement_io.write_journaled(
            writes, [(h.instance, h.body, touches(h, state)) for h in decided.heals], done)
    else:
        written = placement_io.write(placement, [(h.instance, h.body) for h in decided.heals],
                                     done)
    if written.refused is not None:
        consumer, reason = written.refused
        return Result(Outcome.REFUSED, decided, written.count,
                      f"allocations of instance {consumer} could not be written: {reason}")
    return Result(decided.outcome, decided, written.count, stop_line)


def touches(heal_of: Heal, state: Allocations) -> list[Touch]:
    """The trees a heal writes in: those of the providers it writes (on the instance's
    host) and of those the consumer held before."""
    written = list(heal_of.body["allocations"])
    held = [provider for provider in state.allocations_of(heal_of.instance)["allocations"]
            if provider not in written]
    return ([Touch(provider, heal_of.instance, heal_of.host) for provider in written]
            + [Touch(provider, heal_of.instance) for provider in held])


class Problem(enum.StrEnum):
    """What :func:`missing_allocations` finds about one instance."""

    NO_ALLOCATIONS = "no-allocations"
    WRONG_OWNER = "wrong-project-or-user"
    NO_COMPUTE_NODE = "no-compute-node"
    UNHEALABLE = "unhealable-flavor"


@dataclasses.dataclass(frozen=True)
class MissingAllocation:
    """An instance heal_allocations would heal (or stop at), and why."""

    instance: str
    cell: str
    host: str | None
    node: str | None
    problem: Problem
    detail: str

    def __str__(self) -> str:
        return (f"instance {self.instance} on {self.host}/{self.node} (cell {self.cell}): "
                f"{self.problem}: {self.detail}")


_STOP_PROBLEMS = {Outcome.NO_NODE: Problem.NO_COMPUTE_NODE,
                  Outcome.UNSUPPORTED: Problem.UNHEALABLE, Outcome.REFUSED: Problem.UNHEALABLE}


def missing_allocations(cells: Sequence[CellRead], state: Allocations,
                        heal_nested: bool = False) -> list[MissingAllocation]:
    """Every instance of ``cells`` heal_allocations would write for (or stop at),
    read-only and without nova's stops: a pre-flight check's findings.

    ``cells``: :func:`nova_reshape.novadb.cells.read_cells` with ``root_disks``;
    ``state``: ``placement_io.PlacementState(placement)`` (one bulk read on the
    database). Nothing is written.
    """
    planner = _Planner(state, Options(dry_run=True, heal_nested=heal_nested))
    found = []
    for read in cells:
        for instance in ordered(read):
            where = (read.cell.label, instance.host, instance.node)
            try:
                heal_of = planner.verdict(read, instance)
            except _Stopped as stopped:
                found.append(MissingAllocation(instance.uuid, *where,
                                               _STOP_PROBLEMS[stopped.stop.outcome],
                                               stopped.stop.message))
                continue
            if heal_of is not None:
                problem = (Problem.NO_ALLOCATIONS if heal_of.change is Change.CREATE
                           else Problem.WRONG_OWNER)
                found.append(MissingAllocation(instance.uuid, *where, problem,
                                               json.dumps(heal_of.body, sort_keys=True)))
    return found
