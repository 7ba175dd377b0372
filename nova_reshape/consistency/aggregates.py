"""nova's host aggregates mirrored onto the compute node providers, as nova 34's
``nova-manage placement sync_aggregates`` does.

For each host aggregate (API database, by id) and each of its hosts (by
name): the host's cell from ``host_mappings``, the host's compute node in
that cell, whose uuid is its root provider's; that provider is made a
member of the aggregate (same uuid) in Placement. It only adds: a
provider's other aggregates, Placement-only ones included, stay.

Where a host cannot be mirrored, the run goes on and says which hosts at
the end, with nova's statuses: no host mapping (4), no compute node in its
cell (5), no resource provider for the compute node (6). A host with more
than one compute node stops the run where it is met (1), after what came
before it was written, as nova does. Hosts mapped to a cell that was not
read (``--cell``) are left alone and named.

:func:`plan_sync` decides from nova's databases (no I/O). :func:`apply_plan`
asks Placement once per aggregate which providers are already members
(``GET /resource_providers?member_of=``, so a second run writes nothing),
then adds each missing membership with nova's own requests: the provider's
aggregates and generation (``GET .../aggregates`` at 1.19), then one
``PUT .../aggregates`` per aggregate added, so generations end as nova
leaves them. In-process on the database the same rows are written set-based,
a batch of providers per transaction, each node journaled
(:mod:`.journaled_writes`).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from nova_reshape.consistency.journaled_writes import JournaledWrites, Touch
from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.novadb.holders import NodeRow
from nova_reshape.transport.base import Placement
from placement_wsgi import errors

#: The microversion of nova's provider aggregate reads and writes (with generations).
AGGREGATES_VERSION = "1.19"
#: Providers per transaction in-process.
BATCH = 500


class SyncStatus(enum.IntEnum):
    """How a sync ended: its value is the exit status nova documents for it."""

    OK = 0
    TOO_MANY_NODES = 1
    READ_FAILED = 2
    WRITE_FAILED = 3
    NO_HOST_MAPPING = 4
    NO_COMPUTE_NODE = 5
    NO_PROVIDER = 6


class Membership(NamedTuple):
    """``host``'s compute node provider ``provider`` belongs in ``aggregate`` (uuid)."""

    aggregate: str
    aggregate_name: str
    host: str
    provider: str


@dataclass
class SyncPlan:
    """What nova's databases say must be in Placement, and the hosts that cannot be."""

    memberships: list[Membership] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    no_node: list[str] = field(default_factory=list)
    #: Hosts mapped to a cell not read (``--cell``): left alone.
    outside: list[str] = field(default_factory=list)
    #: Aggregates without a uuid (never loaded by a nova since Rocky): left alone.
    no_uuid: list[str] = field(default_factory=list)
    #: (host, compute nodes) of the host that stopped the plan.
    too_many: tuple[str, int] | None = None


@dataclass
class SyncOutcome:
    """What :func:`apply_plan` did."""

    plan: SyncPlan
    added: list[Membership] = field(default_factory=list)
    #: Host -> its compute node uuid, where Placement has no such provider.
    no_provider: dict[str, str] = field(default_factory=dict)
    #: A read or a write Placement refused, which stopped the run: (status, line).
    stopped: tuple[SyncStatus, str] | None = None

    @property
    def status(self) -> SyncStatus:
        """nova's status: a stop or too many nodes first, else the last of 4, 5, 6."""
        if self.stopped:
            return self.stopped[0]
        if self.plan.too_many:
            return SyncStatus.TOO_MANY_NODES
        for status, hosts in ((SyncStatus.NO_PROVIDER, self.no_provider),
                              (SyncStatus.NO_COMPUTE_NODE, self.plan.no_node),
                              (SyncStatus.NO_HOST_MAPPING, self.plan.unmapped)):
            if hosts:
                return status
        return SyncStatus.OK


def plan_sync(aggregates: Iterable[Aggregate], host_cells: Mapping[str, str],
              nodes_by_cell: Mapping[str, Sequence[NodeRow]]) -> SyncPlan:
    """The memberships nova's databases call for, in nova's order (see the module).

    ``host_cells``: host -> cell uuid (``host_mappings``); ``nodes_by_cell``:
    the live compute nodes of each cell read.
    """
    by_host: dict[tuple[str, str], list[NodeRow]] = defaultdict(list)
    for cell, nodes in nodes_by_cell.items():
        for node in nodes:
            by_host[(cell, node.host)].append(node)
    plan, seen = SyncPlan(), set()
    for aggregate in aggregates:
        if not aggregate.uuid:
            plan.no_uuid.append(aggregate.name)
            continue
        for host in sorted(aggregate.hosts):
            cell = host_cells.get(host)
            nodes = by_host.get((cell or "", host), [])
            if cell is not None and cell in nodes_by_cell and len(nodes) > 1:
                plan.too_many = (host, len(nodes))
                return plan
            if cell is not None and cell in nodes_by_cell and nodes:
                plan.memberships.append(Membership(aggregate.uuid, aggregate.name, host,
                                                   nodes[0].uuid or ""))
            elif host not in seen:
                _unplaced(plan, host, cell, nodes_by_cell).append(host)
            seen.add(host)
    return plan


def _unplaced(plan: SyncPlan, host: str, cell: str | None,
              nodes_by_cell: Mapping[str, Sequence[NodeRow]]) -> list[str]:
    if cell is None:
        return plan.unmapped
    return plan.outside if cell not in nodes_by_cell else plan.no_node


Done = Callable[[Membership], None]


def apply_plan(placement: Placement, plan: SyncPlan, done: Done | None = None,
               writes: JournaledWrites | None = None, batch: int = BATCH) -> SyncOutcome:
    """Add every membership of ``plan`` Placement lacks (see the module); ``writes``
    (in-process on the database): ``batch`` providers per transaction, journaled."""
    outcome = SyncOutcome(plan=plan)
    missing = _missing(placement, plan.memberships, outcome)
    if outcome.stopped:
        return outcome
    by_provider: dict[str, list[Membership]] = defaultdict(list)
    for membership in missing:
        by_provider[membership.provider].append(membership)
    if writes is not None:
        _add_in_batches(writes, list(by_provider.items()), outcome, done, batch)
        return outcome
    for provider, memberships in by_provider.items():
        if not _add(placement, provider, memberships, outcome, done):
            break
    return outcome


def _add_in_batches(writes: JournaledWrites,
                    providers: Sequence[tuple[str, Sequence[Membership]]],
                    outcome: SyncOutcome, done: Done | None, batch: int) -> None:
    """:func:`_add`'s writes, ``batch`` providers per transaction; a batch Placement
    refuses is done again one provider per transaction, up to the refused one."""
    for start in range(0, len(providers), batch):
        chunk = providers[start:start + batch]
        try:
            _add_many(writes, chunk, outcome, done)
        except errors.PlacementError:
            for one in chunk:
                try:
                    _add_many(writes, [one], outcome, done)
                except errors.PlacementError as error:
                    provider, memberships = one
                    outcome.stopped = (SyncStatus.WRITE_FAILED, (
                        f"failed adding host {memberships[0].host} (provider {provider}) to "
                        f"its aggregates: HTTP {error.status}: {' '.join(str(error).split())}"))
                    return


def _add_many(writes: JournaledWrites, chunk: Sequence[tuple[str, Sequence[Membership]]],
              outcome: SyncOutcome, done: Done | None) -> None:
    """One transaction: each provider of ``chunk`` added to its aggregates as nova's
    PUTs add them (:meth:`RequestWrites.add_aggregates`)."""
    wanted = {provider: [m.aggregate for m in memberships] for provider, memberships in chunk}
    got = writes.write([Touch(provider, None, memberships[0].host)
                        for provider, memberships in chunk],
                       lambda requests: requests.add_aggregates(wanted))
    for provider, memberships in chunk:
        if provider not in got:
            outcome.no_provider[memberships[0].host] = provider
            continue
        for membership in memberships:
            if membership.aggregate in got[provider]:
                outcome.added.append(membership)
                if done:
                    done(membership)


def _missing(placement: Placement, memberships: Sequence[Membership],
             outcome: SyncOutcome) -> list[Membership]:
    """The memberships Placement does not have: one listing per aggregate."""
    members: dict[str, set[str]] = {}
    for aggregate in dict.fromkeys(membership.aggregate for membership in memberships):
        response = placement.request("GET", f"/resource_providers?member_of={aggregate}",
                                     microversion=AGGREGATES_VERSION)
        if not response:
            outcome.stopped = (SyncStatus.READ_FAILED, f"listing the members of aggregate "
                               f"{aggregate}: HTTP {response.status_code}")
            return []
        members[aggregate] = {item["uuid"] for item in response.json()["resource_providers"]}
    return [membership for membership in memberships
            if membership.provider not in members[membership.aggregate]]


def _add(placement: Placement, provider: str, memberships: Sequence[Membership],
         outcome: SyncOutcome, done: Done | None) -> bool:
    """Add ``provider`` to each aggregate of ``memberships``, one PUT each; False when
    the run must stop."""
    url = f"/resource_providers/{provider}/aggregates"
    response = placement.request("GET", url, microversion=AGGREGATES_VERSION)
    if response.status_code == 404:
        outcome.no_provider[memberships[0].host] = provider
        return True
    if not response:
        outcome.stopped = (SyncStatus.READ_FAILED, f"reading the aggregates of resource "
                           f"provider {provider}: HTTP {response.status_code}")
        return False
    current = response.json()
    for membership in memberships:
        if membership.aggregate in current["aggregates"]:
            continue
        body = {"aggregates": [*current["aggregates"], membership.aggregate],
                "resource_provider_generation": current["resource_provider_generation"]}
        response = placement.request("PUT", url, json=body, microversion=AGGREGATES_VERSION)
        if response.status_code != 200:
            outcome.stopped = (SyncStatus.WRITE_FAILED, (
                f"failed adding host {membership.host} (provider {provider}) to aggregate "
                f"{membership.aggregate}: HTTP {response.status_code}"))
            return False
        current = response.json()
        outcome.added.append(membership)
        if done:
            done(membership)
    return True
