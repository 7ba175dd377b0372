"""The offline ``migrate_compute_inventory`` run (nova-side.md §3.4).

For every non-ironic node of the described hosts, the run does what
nova-compute does at start-up on the new release: the resource tracker's
update with ``startup=True``, whose driver (the shims composed by
:class:`~nova_reshape.virt.described.DescribedDriver`) raises
``ReshapeNeeded`` while the node is in the flat shape and then moves
inventory and allocations in one ``POST /reshaper``.

It goes in two phases:

1. **Read and check** every node (nothing written): find its root provider
   in one listing of all providers, read its tree and allocations through
   the node's own report client, run the pre-flight
   (:mod:`nova_reshape.compute.preflight`), which simulates the reshape on
   copies. Any finding stops the run here.
2. **Write** node by node through the resource tracker. The allocations read
   in phase 1 are handed to the tracker (the first time it asks), so a node
   costs one read pass. Afterwards the node's providers' allocations are read
   back and the invariants (:mod:`nova_reshape.compute.invariants`) checked.

Each node's change is one atomic ``POST /reshaper`` (preceded by creating
the empty child providers and followed by trait updates), so a run killed
at any moment leaves every node either untouched, with empty new children
(the next run's reshape fills them), or reshaped with traits still to set
(the next run sets them). Running again is always safe; on a migrated
deployment it writes nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.compute import invariants, preflight
from nova_reshape.compute.resource_tracker import ComputeNode, ResourceTracker
from nova_reshape.report import SchedulerReportClient
from nova_reshape.virt.described import DescribedDriver, nodes_of
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.shim import Move

LOG = logging.getLogger(__name__)

#: Node outcomes.
SKIPPED = "skipped"          # ironic
UNCHANGED = "unchanged"      # already in the new shape
MIGRATED = "migrated"
WOULD_MIGRATE = "would-migrate"  # dry run
REFUSED = "refused"          # pre-flight findings
NOT_RUN = "not-run"          # another node was refused or failed first
CONFLICT = "conflict"        # generation conflicts left after the tracker's retries
FAILED = "failed"
INVARIANT = "invariant-violated"


class CountingPlacement:
    """Wraps a Placement transport and counts requests (for the report)."""

    def __init__(self, placement: Any) -> None:
        self.placement = placement
        self.calls = 0

    def _call(self, method: str, url: str, json: Any = None, microversion: str | None = None,
              headers: Any = None) -> Any:
        self.calls += 1
        return getattr(self.placement, method)(url, json=json, microversion=microversion,
                                               headers=headers)

    def get(self, url: str, **kwargs: Any) -> Any:
        return self._call("get", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> Any:
        return self._call("put", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> Any:
        return self._call("post", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> Any:
        return self._call("delete", url, **kwargs)


class MigrationReportClient(SchedulerReportClient):
    """The report client, remembering traits and classes known to exist.

    Every node has its own client (so each cache holds one tree and copying
    it stays cheap), but they share ``known``: the trait and custom class
    names Placement confirmed, so ``OWNER_NOVA`` is not looked up again for
    every provider of every node. Safe while the run is the only writer;
    nothing here deletes traits or classes.
    """

    def __init__(self, placement: Any, known: set[str]) -> None:
        super().__init__(placement)
        self.known = known

    def _ensure_traits(self, context: Any, traits: Iterable[str]) -> None:
        missing = set(traits) - self.known
        if missing:
            super()._ensure_traits(context, missing)
            self.known |= missing

    def _ensure_resource_classes(self, context: Any, names: Iterable[str]) -> None:
        missing = {name for name in names if name.startswith("CUSTOM_")} - self.known
        if missing:
            super()._ensure_resource_classes(context, missing)
            self.known |= missing


class PrefetchedReport:
    """A report client that answers the first allocations read from phase 1.

    Everything else goes to the wrapped client. After a conflict the
    tracker runs again and reads fresh allocations.
    """

    def __init__(self, report: SchedulerReportClient, nodename: str,
                 allocations: dict[str, Any]) -> None:
        self._report = report
        self._prefetched: dict[str, dict[str, Any]] = {nodename: allocations}

    def get_allocations_for_provider_tree(self, context: Any,
                                          nodename: str) -> dict[str, Any]:
        if nodename in self._prefetched:
            return self._prefetched.pop(nodename)
        return self._report.get_allocations_for_provider_tree(context, nodename)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._report, name)


@dataclasses.dataclass
class NodeResult:
    """What happened to one node."""

    nodename: str
    status: str
    root: str | None = None
    findings: list[preflight.Finding] = dataclasses.field(default_factory=list)
    moves: list[Move] = dataclasses.field(default_factory=list)
    simulation: preflight.Simulation | None = None
    violations: list[invariants.Violation] = dataclasses.field(default_factory=list)
    error: str | None = None
    calls: int = 0
    #: The node's tree as read back after the write (None if not written).
    tree_after: Any = None


@dataclasses.dataclass
class _Prepared:
    node: Node
    root: str
    report: SchedulerReportClient
    allocations: dict[str, Any]
    result: NodeResult


Progress = Callable[[str, int, int], None]


class Migration:
    """One ``migrate_compute_inventory`` run over ``hosts`` through ``placement``.

    ``placement``: a transport (PlacementDirect's client or
    :func:`~nova_reshape.placement_client.http_placement`). ``progress`` is
    called as ``progress(phase, done, total)``. ``verify`` reads each
    written node back and checks the invariants.
    """

    def __init__(self, placement: Any, hosts: Iterable[Host], dry_run: bool = False,
                 progress: Progress | None = None, verify: bool = True) -> None:
        self.placement = CountingPlacement(placement)
        self.hosts = list(hosts)
        self.nodes = nodes_of(self.hosts)
        self.dry_run = dry_run
        self.progress = progress or (lambda phase, done, total: None)
        self.verify = verify
        self.driver = DescribedDriver(self.nodes)
        self.results: list[NodeResult] = []
        #: Trait and custom class names known to exist (shared by the report clients).
        self.known: set[str] = set()

    # -- phase 1 -----------------------------------------------------------------

    def _listing(self) -> preflight.Listing:
        response = self.placement.get("/resource_providers", microversion="1.14")
        if response.status_code != 200:
            raise exception.ResourceProviderRetrievalFailed(
                message=f"Listing resource providers failed: {response.status_code} "
                        f"{response.text}")
        return preflight.Listing(response.json()["resource_providers"])

    def _prepare(self, node: Node, listing: preflight.Listing) -> _Prepared | None:
        result = NodeResult(node.nodename, REFUSED)
        self.results.append(result)
        start = self.placement.calls
        root, findings = preflight.resolve_root(node, listing)
        if root is None:
            result.findings = findings
            return None
        result.root = root
        report = MigrationReportClient(self.placement, self.known)
        tree = report.get_provider_tree_and_ensure_root(None, root, name=node.nodename)
        allocations = report.get_allocations_for_provider_tree(None, node.nodename)
        findings, simulation = preflight.check_node(node, self.driver, tree, allocations,
                                                    listing)
        result.findings, result.simulation = findings, simulation
        result.calls = self.placement.calls - start
        if findings or simulation is None:
            return None
        result.status = WOULD_MIGRATE if simulation.reshape else UNCHANGED
        result.moves = simulation.moves
        return _Prepared(node, root, report, allocations, result)

    # -- phase 2 -----------------------------------------------------------------

    def _write(self, prepared: _Prepared) -> None:
        node, result = prepared.node, prepared.result
        simulation = result.simulation
        assert simulation is not None
        start = self.placement.calls
        tracker = ResourceTracker(
            node.nodename, self.driver,
            PrefetchedReport(prepared.report, node.nodename, prepared.allocations),
            compute_nodes=[ComputeNode(prepared.root, node.nodename)],
            allocations_every_update=False)
        self.driver.moves = []
        try:
            tracker.update_available_resource(None, node.nodename, startup=True)
        except (exception.PlacementReshapeConflict,
                exception.ResourceProviderUpdateConflict) as error:
            result.status, result.error = CONFLICT, str(error)
        except Exception as error:  # noqa: BLE001 - reported per node, run stops
            LOG.debug("node %s failed", node.nodename, exc_info=True)
            result.status, result.error = FAILED, f"{type(error).__name__}: {error}"
        else:
            reshaped = bool(self.driver.moves) or simulation.reshape
            result.status = MIGRATED if reshaped else UNCHANGED
            result.moves = list(self.driver.moves)
            if self.verify and reshaped:
                self._check(prepared)
        result.calls += self.placement.calls - start

    def _check(self, prepared: _Prepared) -> None:
        """Read the node back and check the invariants against phase 1's reads."""
        result, report, name = prepared.result, prepared.report, prepared.node.nodename
        simulation = result.simulation
        assert simulation is not None
        tree = report.get_provider_tree_and_ensure_root(None, prepared.root, name=name)
        inventories = preflight.inventories_of(tree, name)
        after: dict[str, dict[str, Any]] = {}
        for rp_uuid in inventories:
            for consumer, entry in report.get_allocations_for_resource_provider(
                    None, rp_uuid).allocations.items():
                body = after.setdefault(consumer, {"allocations": {}})
                body["allocations"][rp_uuid] = {"resources": dict(entry["resources"])}
        before_scope = simulation.tree_before.get_provider_uuids(name)
        names = preflight.names_of(simulation.tree_before, tree)
        result.violations = invariants.check_node(
            simulation.allocations_before, after, before_scope, inventories,
            [move for move in result.moves if move.created], names)
        result.tree_after = copy.deepcopy(tree)
        if result.violations:
            result.status = INVARIANT

    # -- the run -----------------------------------------------------------------

    def run(self) -> list[NodeResult]:
        """Check every node, then (unless a dry run or refused) write them.

        Results come in the order the host descriptions give the nodes.
        """
        self._run()
        order = {name: index for index, name in enumerate(self.nodes)}
        self.results.sort(key=lambda result: order[result.nodename])
        return self.results

    def _run(self) -> None:
        listing = self._listing()
        work = [node for node in self.nodes.values() if not node.is_ironic]
        for node in self.nodes.values():
            if node.is_ironic:
                self.results.append(NodeResult(node.nodename, SKIPPED))
        prepared: list[_Prepared] = []
        for index, node in enumerate(work):
            item = self._prepare(node, listing)
            if item is not None:
                prepared.append(item)
            self.progress("check", index + 1, len(work))
        refused = any(result.status == REFUSED for result in self.results)
        if self.dry_run or refused:
            if refused:
                for item in prepared:
                    item.result.status = NOT_RUN
            return
        for index, item in enumerate(prepared):
            self._write(item)
            # Drop the node's cache and reads as soon as it is done.
            item.report = None  # type: ignore[assignment]
            item.allocations = {}
            self.progress("migrate", index + 1, len(prepared))
            if item.result.status in (FAILED, INVARIANT):
                for rest in prepared[index + 1:]:
                    rest.result.status = NOT_RUN
                break


def summarize(results: Sequence[NodeResult]) -> dict[str, int]:
    """status -> number of nodes."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return counts
