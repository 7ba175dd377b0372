"""The migration's scheduling check: will nova 34's scheduler still place every flavor?

Before anything is written, the capacity table of
:mod:`nova_reshape.scheduler.capacity` is measured twice on the Placement
database, for the same flavors and with the same scheduler options:

* **before**: the cloud as it is;
* **after**: the cloud as the plan leaves it. Every node is checked and
  planned exactly as the run will (:class:`~nova_reshape.compute.migrate.Migration`'s
  first phase, nothing written), each non-empty plan becomes the
  :class:`~placement_wsgi.objects.tree_change.TreeChange` the run would
  write, and all of them are applied in ONE database transaction that is
  rolled back once the table is read over it
  (:meth:`~nova_reshape.transport.direct.DirectTransport.read_with_changes`).
  The candidate engine reads the very rows a commit of the same changes
  would leave, so the answer is the one the real run measures afterwards
  (:func:`measure`), which says whether it does.

Both are answered for the cloud once its computes run again: offline every
nova-compute is down to ComputeFilter, so every service counts as up
(disabled and forced-down ones stay out). "After" is after each compute's
first start on the target release: its NUMA cells are split by its
``cpu_shared_set``/``cpu_dedicated_set`` as it will report them, and its
root carries ``OWNER_NOVA``, which nova 34 requires once every nova-compute
is at service version 73 (see :func:`after_check`); "before" follows the
versions the cells hold, and without them the computes being migrated are
taken as older than that.

:class:`SchedulingCheck` compares the two per flavor (:class:`FlavorDelta`):
a flavor that had a valid host and has none after is a finding
(``scheduling_lost``: nothing is written, exit 3) unless the operator
accepted it; one that loses hosts or capacity is a warning; one that fits
nowhere before and after is neither.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nova_reshape.compute import execute, migrate, preflight
from nova_reshape.nova.flavor import Flavor
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.scheduler.capacity.core import CapacityCheck
from nova_reshape.scheduler.capacity.inputs import NovaInputs
from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity, HostFit
from nova_reshape.scheduler.live.nova_hosts import CpuSets
from nova_reshape.scheduler.live.placement import read_view
from nova_reshape.transport.base import Placement
from nova_reshape.transport.direct import DirectTransport, on_database
from nova_reshape.virt.described import nodes_of
from nova_reshape.virt.host import Host
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.objects.tree_change import TreeChange

SCHEDULING_LOST = "scheduling_lost"

#: What every answer of the check assumes.
COMPUTES_UP = ("the computes are stopped: every nova-compute counts as up (disabled and "
               "forced-down ones stay out), so the answer holds once they run again")
#: The note of a PCI flavor scheduled through Placement, after the migration.
PCI_UNTIL_START = ("uses PCI in Placement: PciPassthroughFilter keeps a PCI pool only once "
                   "nova-compute {release} has started on its host and recorded the pool's "
                   "provider, so it cannot be scheduled between this migration and each "
                   "compute's first start")


class Verdict(enum.StrEnum):
    """What the plan does to one flavor."""

    SAME = "same"
    GAINED = "gained"
    #: Hosts or capacity lost, some valid host left: a warning.
    LOSS = "loss"
    #: Had a valid host before, none after: the finding.
    LOST = "lost"
    #: No valid host before nor after: neither finding nor warning.
    NOWHERE = "nowhere"


@dataclass(frozen=True)
class FlavorDelta:
    """One flavor's table before and after (same flavor, same hosts by root uuid)."""

    before: FlavorCapacity
    after: FlavorCapacity

    @property
    def name(self) -> str:
        return self.before.name

    def lost(self) -> list[tuple[HostFit, str]]:
        """Hosts valid before and not after, each with why (after's reason)."""
        after = self.after.by_uuid()
        why = "; ".join(self.after.notes) or "not a host any more"
        return [(host, after[uuid].reason if uuid in after else why)
                for uuid, host in self.before.valid_hosts().items()
                if uuid not in self.after.valid_hosts()]

    def gained(self) -> list[HostFit]:
        before = self.before.valid_hosts()
        return [host for uuid, host in self.after.valid_hosts().items() if uuid not in before]

    @property
    def verdict(self) -> Verdict:
        had, has = self.before.valid_hosts(), self.after.valid_hosts()
        if not had and not has:
            return Verdict.NOWHERE
        if had and not has:
            return Verdict.LOST
        fits = self.after.by_uuid()
        fewer = any(uuid not in has or fits[uuid].fits < host.fits for uuid, host in had.items())
        if fewer or self.after.total < self.before.total:
            return Verdict.LOSS
        return Verdict.GAINED if self.gained() or self.after.total > self.before.total \
            else Verdict.SAME

    def cause(self) -> str:
        """One line naming why the flavor lost its hosts (the first lost host's reason)."""
        lost = self.lost()
        if not lost:
            return ""
        host, why = lost[0]
        more = f" (and {len(lost) - 1} more host(s))" if len(lost) > 1 else ""
        return f"{host.name}: {why}{more}"


@dataclass
class SchedulingCheck:
    """The check's answer: both tables, their comparison and what the operator accepted."""

    before: CapacityReport
    after: CapacityReport
    accepted: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    #: The table measured after the real run wrote (None until then, or in a dry run).
    measured: CapacityReport | None = None

    def deltas(self) -> list[FlavorDelta]:
        after = self.after.by_name()
        return [FlavorDelta(flavor, after[flavor.name]) for flavor in self.before]

    def findings(self) -> list[preflight.Finding]:
        """One ``scheduling_lost`` finding per flavor LOST and not accepted."""
        return [preflight.Finding(SCHEDULING_LOST, f"flavor {delta.name}",
                                  f"had {len(delta.before.valid_hosts())} valid host(s) and "
                                  f"has none once the plan is applied: {delta.cause()}")
                for delta in self.deltas()
                if delta.verdict == Verdict.LOST and delta.name not in self.accepted]

    def differences(self) -> list[str]:
        """The flavors whose measured table differs from the planned "after"."""
        if self.measured is None:
            return []
        measured = self.measured.by_name()
        return [flavor.name for flavor in self.after
                if measured.get(flavor.name) is None
                or measured[flavor.name].to_dict() != flavor.to_dict()]


@dataclass(frozen=True)
class CheckSetup:
    """What the check answers for: nova's inputs, the flavors, the accepted losses."""

    inputs: NovaInputs
    flavors: tuple[Flavor, ...]
    accepted: frozenset[str] = frozenset()


class _Capture:
    """A migration ``show`` that keeps each planned node's tree change (no detail)."""

    def __init__(self) -> None:
        self.changes: list[TreeChange] = []

    def __call__(self, result: migrate.NodeResult, simulation: preflight.Simulation,
                 tree_after: ProviderTree | None) -> None:
        plan = simulation.plan
        if result.status in (migrate.WOULD_MIGRATE, migrate.WOULD_UPDATE) and not plan.empty:
            self.changes.append(execute.tree_change(
                plan, execute.generations_of(plan, simulation.tree_before),
                simulation.allocations_before))


class NodesRefused(Exception):
    """The run's own pre-flight refuses a node: there is no plan to measure (the run
    then refuses with its findings)."""


def planned_changes(placement: Placement, hosts: Iterable[Host], options: DriverOptions
                    ) -> tuple[list[TreeChange], dict[str, CpuSets]]:
    """Every node's change as the run would write it (the run's own check and plan,
    nothing written), and each node's CPU sets; NodesRefused when a node is refused."""
    capture = _Capture()
    run = migrate.Migration(placement, hosts, migrate.Settings(
        dry_run=True, options=options, show=capture))
    run.check()
    if run.refused:
        raise NodesRefused("the pre-flight refuses some nodes")
    return capture.changes, cpu_sets_of(hosts, options)


def cpu_sets_of(hosts: Iterable[Host], options: DriverOptions) -> dict[str, CpuSets]:
    """Each node's CPU sets as the run sees them (completed from its nova.conf), one
    host at a time: the hosts may be a stream read again for this pass."""
    sets = {}
    for host in hosts:
        nodes, _ = migrate.with_nova_conf(nodes_of([host]), options)
        sets.update({name: (node.cpu_shared_set, node.cpu_dedicated_set)
                     for name, node in nodes.items()
                     if node.cpu_shared_set is not None or node.cpu_dedicated_set is not None})
    return sets


def _direct(placement: Placement) -> DirectTransport:
    direct = on_database(placement)
    if direct is None:
        raise ValueError("the scheduling check needs Placement in-process on its database")
    return direct


def _table(direct: DirectTransport, changes: Sequence[TreeChange], check: CapacityCheck,
           flavors: Iterable[Flavor]) -> CapacityReport:
    return direct.read_with_changes(
        changes, lambda connection: check.run(flavors, functools.partial(read_view,
                                                                           connection)))


def after_check(setup: CheckSetup, cpu_sets: dict[str, CpuSets]) -> CapacityCheck:
    """The scheduler of the cloud after each compute's first start on the target.

    ``OWNER_NOVA``: from nova 34 the scheduler requires it once every compute is
    new, and every compute writes it on its root (and PCI providers) at that first
    start, the migrated ones already have it: so no compute root lacks it "after",
    and the request goes without it (roots of other owners are no hosts in nova's
    database anyway).
    """
    inputs = setup.inputs
    return CapacityCheck(inputs.conf, inputs.source(assume_up=True, cpu_sets=cpu_sets),
                         False, inputs.profiles)


def preview(placement: Placement, hosts: Iterable[Host], options: DriverOptions,
            setup: CheckSetup) -> tuple[SchedulingCheck, dict[str, CpuSets]]:
    """Before and after (see the module), nothing written; and the nodes' CPU sets
    (for :func:`measure`). NodesRefused when the run's pre-flight refuses a node."""
    direct = _direct(placement)
    changes, cpu_sets = planned_changes(placement, hosts, options)
    inputs = setup.inputs
    # without the cells' service versions, the computes being migrated are older
    # than the target: no OWNER_NOVA yet
    owner_nova = inputs.owner_nova_now()
    before = _table(direct, [], CapacityCheck(inputs.conf, inputs.source(assume_up=True),
                                              bool(owner_nova), inputs.profiles),
                    setup.flavors)
    after = _table(direct, changes, after_check(setup, cpu_sets), setup.flavors)
    _note_pci(after, setup, options)
    return SchedulingCheck(before, after, setup.accepted, [COMPUTES_UP]), cpu_sets


def measure(placement: Placement, setup: CheckSetup, options: DriverOptions,
            cpu_sets: dict[str, CpuSets]) -> CapacityReport:
    """The "after" table measured on the database as it now is (after the write)."""
    table = _table(_direct(placement), [], after_check(setup, cpu_sets), setup.flavors)
    _note_pci(table, setup, options)
    return table


def _note_pci(report: CapacityReport, setup: CheckSetup, options: DriverOptions) -> None:
    """Flavors asking PCI devices of Placement wait for their computes' first start."""
    conf = setup.inputs.conf
    if not conf.filter_scheduler.pci_in_placement:
        return
    for flavor, table in zip(setup.flavors, report.flavors, strict=True):
        if "pci_passthrough:alias" in flavor.extra_specs:
            table.notes.append(PCI_UNTIL_START.format(release=options.target.number))
