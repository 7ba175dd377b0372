"""How many more instances of one flavor fit on one host: nova's consume-then-filter loop.

Each further instance is a new boot of the flavor, scheduled as nova 34
schedules it on that host alone:

1. Placement: the host's allocation candidates that still fit. The
   candidates were asked for once, without ``limit``, on the tree as it is;
   claims only ever lower the room, so the candidates of a later boot are
   exactly those of the first whose every amount still fits in its
   provider's room (:class:`TreeRoom`: ``capacity - used`` from the
   candidates' provider summaries, the capacity rule Placement applied).
   One class of one group comes from one provider, as the candidate says.
2. The configured filters on the host as consumed so far, all of them
   (each boot is a new request: filters run once per request run again),
   so NUMATopologyFilter sees the pinned CPUs taken by earlier claims and
   PciPassthroughFilter the devices. Their request-side preparation is
   done once per flavor (:func:`prepare_checks`), their host checks before
   every claim.
3. The first candidate left is claimed (nova claims the host's first), and
   the host consumes the instance (RAM, disk, vCPUs, instance counter, NUMA
   cells, PCI pools: ``HostState.consume_from_request``).

It stops at the first boot that finds no candidate or that a filter drops,
or at :data:`MAX_FITS` (a flavor asking Placement for nothing would fit
forever).

That loop (:func:`count_fits`) is the reference. When no prepared filter
check can change its verdict with a claim (:func:`blind_to_claims`: only
the built-in filters of :data:`BLIND_TO_CLAIMS` have a check for the
flavor), the same count is had without one iteration per instance
(:func:`count_in_room`): the room only shrinks, so a candidate that stopped
fitting never fits again and the first candidate fitting stays the first
until it is full; it is claimed ``min(free // amount)`` times at once, then
the next one is. NUMATopologyFilter, PciPassthroughFilter, the resource
filters, ComputeCapabilitiesFilter, JsonFilter and any third party's filter
read what a claim changes: with a check of theirs the loop runs, but for a
pinned guest NUMATopologyFilter alone bounds in closed form
(:func:`numa_slots`). :func:`way_of` chooses per flavor, :func:`count`
counts one host.
"""

from __future__ import annotations

import copy
import enum
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.scheduler.filters import affinity, aggregate, capabilities, core, devices, image
from nova_reshape.scheduler.filters.base import (
    BaseHostFilter,
    HostCheck,
    PreparedHostFilter,
    Verdict,
)
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.request_spec import RequestSpec

#: The count stops here (documented): a flavor asking for no resource fits without end.
MAX_FITS = 10_000

#: Built-in filters (these exact classes, not subclasses) whose check reads
#: nothing a claim changes (free RAM and disk, vCPUs used, instance and I/O
#: counters, NUMA usage, PCI pools, limits, the candidates): the service,
#: hints, server groups, aggregates, image and hypervisor properties, metrics.
BLIND_TO_CLAIMS = frozenset({
    core.AllHostsFilter, core.ComputeFilter, core.RetryFilter, core.AvailabilityZoneFilter,
    image.ImagePropertiesFilter, image.IsolatedHostsFilter,
    image.AggregateImagePropertiesIsolation, affinity.DifferentHostFilter,
    affinity.SameHostFilter, affinity.SimpleCIDRAffinityFilter,
    affinity.ServerGroupAffinityFilter, affinity.ServerGroupAntiAffinityFilter,
    aggregate.AggregateMultiTenancyIsolation, aggregate.AggregateTypeAffinityFilter,
    capabilities.AggregateInstanceExtraSpecsFilter, devices.MetricsFilter})

Candidate = Mapping[str, Any]


def room_of(summaries: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """``capacity - used`` per (provider, class) of a candidates body's provider
    summaries: the room before any claim, read once per body."""
    return {(provider, resource_class): int(figures["capacity"]) - int(figures["used"])
            for provider, summary in summaries.items()
            for resource_class, figures in summary.get("resources", {}).items()}


class TreeRoom:
    """Room left per (provider, class), from a candidates body's provider summaries,
    less what this count claimed. ``room``: :func:`room_of` the summaries, when
    the caller has it already (it is only read)."""

    def __init__(self, summaries: Mapping[str, Any],
                 room: Mapping[tuple[str, str], int] | None = None) -> None:
        self.room = room_of(summaries) if room is None else room
        self.claimed: dict[tuple[str, str], int] = {}

    def free(self, provider: str, resource_class: str) -> int:
        key = (provider, resource_class)
        return self.room.get(key, 0) - self.claimed.get(key, 0)

    def fits(self, candidate: Candidate) -> bool:
        """Whether every amount of the allocation request fits in its provider's room."""
        return all(amount <= self.free(provider, resource_class)
                   for provider, entry in candidate["allocations"].items()
                   for resource_class, amount in entry["resources"].items())

    def claim(self, candidate: Candidate, times: int = 1) -> None:
        for provider, entry in candidate["allocations"].items():
            for resource_class, amount in entry["resources"].items():
                key = (provider, resource_class)
                self.claimed[key] = self.claimed.get(key, 0) + amount * times

    def times(self, candidate: Candidate, most: int) -> int:
        """How many claims of ``candidate`` in a row fit, at most ``most``: the
        least ``free // amount`` over its amounts (an amount of 0 fits while its
        room is not negative)."""
        times = most
        for provider, entry in candidate["allocations"].items():
            for resource_class, amount in entry["resources"].items():
                free = self.free(provider, resource_class)
                if amount > 0:
                    times = min(times, free // amount if free > 0 else 0)
                elif free < 0:
                    times = 0
        return times


def prepare_checks(filters: Sequence[BaseHostFilter], spec: RequestSpec) -> list[HostCheck]:
    """The configured filters' per-host checks for boots of ``spec``, prepared once.

    Every boot is a copy of ``spec`` (only consuming changes a boot's NUMA
    topology, after its filters ran), so a built-in filter's request-side
    preparation is the same for all of them; a filter that passes every
    host for ``spec`` has no check. A third party's ``host_passes`` is
    called per boot, as nova calls it.
    """
    checks: list[HostCheck] = []
    for host_filter in filters:
        if isinstance(host_filter, PreparedHostFilter):
            check = host_filter.checker(spec)
            if check is not None:
                checks.append(check)
        else:
            checks.append(functools.partial(_passes, host_filter, spec))
    return checks


class Way(enum.Enum):
    """How one flavor's counts are had (see the module)."""

    #: No check can change its verdict with a claim: :func:`count_in_room`.
    ROOM = "room"
    #: Only NUMATopologyFilter's can, for a guest whose boots each take one slot
    #: of one cell (:func:`numa_slots`): the least of both counts.
    NUMA_SLOTS = "numa slots"
    #: nova's loop, :func:`count_fits`.
    LOOP = "loop"


def sensitive_filters(filters: Sequence[BaseHostFilter], spec: RequestSpec
                      ) -> list[BaseHostFilter]:
    """The filters with a check for ``spec`` that may change its verdict with a
    claim (any not in :data:`BLIND_TO_CLAIMS`)."""
    return [host_filter for host_filter in filters
            if type(host_filter) not in BLIND_TO_CLAIMS
            and (not isinstance(host_filter, PreparedHostFilter)
                 or host_filter.checker(spec) is not None)]


def blind_to_claims(filters: Sequence[BaseHostFilter], spec: RequestSpec) -> bool:
    """Whether no filter with a check for ``spec`` can change its verdict with a
    claim (see :data:`BLIND_TO_CLAIMS`): then :func:`count_in_room` is exact."""
    return not sensitive_filters(filters, spec)


def way_of(filters: Sequence[BaseHostFilter], spec: RequestSpec) -> Way:
    """How the counts of ``spec`` are had (see :class:`Way`)."""
    sensitive = sensitive_filters(filters, spec)
    if not sensitive:
        return Way.ROOM
    if [type(f) for f in sensitive] == [devices.NUMATopologyFilter] and _slotted(spec):
        return Way.NUMA_SLOTS
    return Way.LOOP


def _slotted(spec: RequestSpec) -> bool:
    """A guest of one cell of dedicated CPUs only, thread policy ``prefer``, no page
    size, no emulator threads of its own, no PCI request: each boot pins that many
    CPUs and takes that much memory of ONE cell, whatever the cell."""
    topology = spec.numa_topology
    if topology is None or len(topology.cells) != 1 or topology.emulator_threads_isolated:
        return False
    cell = topology.cells[0]
    return (bool(cell.pcpuset) and not cell.cpuset and cell.pagesize is None
            and cell.memory > 0 and cell.thread_policy in (None, "prefer")
            and not spec.pci_requests)


def numa_slots(host: HostState, spec: RequestSpec) -> int | None:
    """How many boots of a :func:`_slotted` guest the host's NUMA cells take one
    after the other: per cell ``min(free dedicated CPUs // guest CPUs, free memory
    // guest memory)`` where the cell's fixed checks pass, summed (each boot takes
    one slot of the cell it lands on, so the order of the cells does not matter).
    None when a cell's threads are not plain (sibling sets overlapping)."""
    topology = host.numa_topology
    if topology is None:
        return 0
    (guest,) = spec.numa_topology.cells
    cpus, memory = len(guest.pcpuset), guest.memory
    slots = 0
    for cell in topology.cells:
        if sum(map(len, cell.siblings)) != len(frozenset().union(*cell.siblings)):
            return None
        if cell.mempages:
            smallest = min(cell.mempages, key=lambda page: page.size_kb)
            fixed = (smallest.total - smallest.reserved) * smallest.size_kb >= memory * 1024
        else:
            fixed = memory <= cell.memory
        if fixed and cpus <= len(cell.pcpuset):
            slots += max(0, min(cell.avail_pcpus // cpus, cell.avail_memory // memory))
    return slots


def count(host: HostState, candidates: Sequence[Candidate], spec: RequestSpec,
          checks: Sequence[HostCheck], room: TreeRoom, way: Way, passed: bool = False) -> int:
    """The host's count the ``way`` of its flavor (:func:`way_of`): nova's loop's
    answer. ``host``: a fork of its own (its candidates and limits are set; the
    loop consumes a consumable fork of it). ``passed``: the host just passed
    ``checks``, in order, with ``candidates`` and an unclaimed ``room`` (the
    filter pass of its first boot), so a way running them once before any claim
    knows their verdict already."""
    if way is Way.ROOM:
        return count_in_room(host, candidates, () if passed else checks, room)
    slots = numa_slots(host, spec) if way is Way.NUMA_SLOTS else None
    if slots is None:
        return count_fits(host.fork(consumable=True), candidates, spec, checks, room)
    # a boot lands iff Placement still has a candidate and the cells a slot: the
    # two do not depend on each other (the NUMA check keeps every candidate)
    return min(count_in_room(host, candidates, () if passed else checks, room), slots)


def _passes(host_filter: BaseHostFilter, spec: RequestSpec, host: HostState) -> Verdict:
    return host_filter.host_passes(host, copy.copy(spec))


def count_fits(host: HostState, candidates: Sequence[Candidate], spec: RequestSpec,
               checks: Sequence[HostCheck], room: TreeRoom) -> int:
    """How many boots of ``spec`` the host takes one after the other (see the module).

    ``candidates``: the host's allocation requests as Placement answered the
    first boot; ``checks``: :func:`prepare_checks`' for ``spec``. ``host`` is
    consumed (use a HostState made for this count).
    """
    fits = 0
    while fits < MAX_FITS:
        left = [candidate for candidate in candidates if room.fits(candidate)]
        if not left:
            break
        host.allocation_candidates = left
        if not all(check(host) for check in checks):
            break
        room.claim(host.allocation_candidates[0])
        # a new request: consuming rewrites its NUMA topology
        host.consume_from_request(copy.copy(spec))
        fits += 1
    return fits


def count_in_room(host: HostState, candidates: Sequence[Candidate], checks: Sequence[HostCheck],
                  room: TreeRoom) -> int:
    """:func:`count_fits`' answer when the checks are blind to claims (see the module).

    The checks run once (their verdict cannot change); then, in the
    candidates' order, each is claimed as many times in a row as it fits: the
    loop's claims exactly, without one iteration per instance. ``host`` is
    not consumed.
    """
    left = [candidate for candidate in candidates if room.fits(candidate)]
    if not left:
        return 0
    host.allocation_candidates = left
    if not all(check(host) for check in checks):
        return 0
    fits = 0
    for candidate in left:
        times = room.times(candidate, MAX_FITS - fits)
        if times > 0:
            room.claim(candidate, times)
            fits += times
    return fits
