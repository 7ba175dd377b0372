"""The offline ``migrate_compute_inventory`` run.

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
import enum
import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.compute import conf_check, invariants, plan, preflight
from nova_reshape.compute.resource_tracker import ComputeNode, ResourceTracker
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport.counting import CountingTransport as CountingPlacement
from nova_reshape.virt.described import DescribedDriver, nodes_of, shims_for
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.releases import DriverOptions
from nova_reshape.virt.shim import Move

LOG = logging.getLogger(__name__)


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


class MigrationReportClient(SchedulerReportClient):
    """The report client, sparing the reads the run already knows the answer to.

    The migration is the only writer of the providers it touches (every
    service but the database is down), so three of the stock client's reads
    can come from what the run has already seen:

    * traits and custom classes Placement confirmed (``known``, shared by
      every node's client), so ``OWNER_NOVA`` is not looked up for every
      provider of every node; nothing in the run deletes them;
    * a node's tree, the first time it is asked for, comes from the run's
      listing of every provider (``listing``), and a provider the listing
      does not hold is known not to exist, so creating a new child costs
      its POST only (a 409 "already exists" still falls back to reading it);
    * after the ``POST /reshaper`` the new generations come from one listing
      of the tree instead of one inventory read per provider: the reshape
      replaced each provider's inventory with exactly what was sent.

    After a conflict the tracker clears the cache and every read goes to
    Placement again. Every node has its own client, so each cache holds one
    tree and copying it stays cheap.
    """

    def __init__(self, placement: Any, known: set[str],
                 listing: preflight.Listing | None = None) -> None:
        super().__init__(placement)
        self.known = known
        self.listing = listing
        #: Uuids whose listed answer was used once; after that Placement is asked.
        self._answered: set[str] = set()

    def get_providers_in_tree(self, context: Any, uuid: str) -> list[dict[str, Any]]:
        if self.listing is not None and uuid not in self._answered:
            self._answered.add(uuid)
            if uuid in self.listing.trees:
                return [dict(provider) for provider in self.listing.trees[uuid]]
            if uuid not in self.listing.by_uuid:
                return []
        return super().get_providers_in_tree(context, uuid)

    def _refresh_after_reshape(self, context: Any, new_tree: ProviderTree,
                               new_uuids: list[str]) -> None:
        roots = sorted({self._provider_tree.get_provider_uuids_in_tree(rp_uuid)[0]
                        for rp_uuid in new_uuids})
        generations: dict[str, int] = {}
        for root in roots:
            with self._catch_all(root):
                generations.update(
                    (provider["uuid"], provider["generation"])
                    for provider in SchedulerReportClient.get_providers_in_tree(
                        self, context, root))
        for rp_uuid in new_uuids:
            if rp_uuid in generations:
                self._provider_tree.update_inventory(
                    rp_uuid, new_tree.data(rp_uuid).inventory,
                    generation=generations[rp_uuid])
            else:
                super()._refresh_after_reshape(context, new_tree, [rp_uuid])

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
    status: NodeStatus
    root: str | None = None
    findings: list[preflight.Finding] = dataclasses.field(default_factory=list)
    moves: list[Move] = dataclasses.field(default_factory=list)
    simulation: preflight.Simulation | None = None
    violations: list[invariants.Violation] = dataclasses.field(default_factory=list)
    error: str | None = None
    calls: int = 0
    #: Placement requests other than GET (0 for an unchanged node).
    writes: int = 0
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
    written node back and checks the invariants. ``options`` names the
    target release (whose reshapes are the ones done) and the operator's
    switches.
    """

    def __init__(self, placement: Any, hosts: Iterable[Host], dry_run: bool = False,
                 progress: Progress | None = None, verify: bool = True,
                 only: Collection[str] | None = None,
                 options: DriverOptions | None = None) -> None:
        self.placement = CountingPlacement(placement)
        self.hosts = list(hosts)
        self.options = options or DriverOptions()
        #: nodename -> disagreements between its host file and nova.conf.
        self.conf_findings: dict[str, list[preflight.Finding]] = {}
        self.nodes = self._with_nova_conf(nodes_of(self.hosts))
        #: The nodes this run handles (all of them unless ``only`` names some:
        #: one worker's share of a parallel run).
        self.mine = [node for name, node in self.nodes.items() if only is None or name in only]
        self._prepared: list[_Prepared] = []
        self.dry_run = dry_run
        self.progress = progress or (lambda phase, done, total: None)
        self.verify = verify
        self.driver = DescribedDriver(self.nodes, shims_for(self.options), self.options)
        self.results: list[NodeResult] = []
        #: Trait and custom class names known to exist (shared by the report clients).
        self.known: set[str] = set()

    def _with_nova_conf(self, nodes: dict[str, Node]) -> dict[str, Node]:
        """The nodes completed from nova.conf (when given); disagreements noted."""
        conf = self.options.nova_conf
        if conf is None:
            return nodes
        merged = {}
        for name, node in nodes.items():
            if node.is_ironic:
                merged[name] = node
                continue
            merged[name], self.conf_findings[name] = conf_check.merge_node(
                node, conf, self.options.target)
        return merged

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
        report = MigrationReportClient(self.placement, self.known, listing)
        tree = report.get_provider_tree_and_ensure_root(None, root, name=node.nodename)
        allocations = report.get_allocations_for_provider_tree(None, node.nodename)
        findings, simulation = preflight.check_node(node, self.driver, tree, allocations,
                                                    listing)
        findings = self.conf_findings.get(node.nodename, []) + findings
        result.findings, result.simulation = findings, simulation
        result.calls = self.placement.calls - start
        if findings or simulation is None:
            return None
        node_plan = simulation.plan
        result.status = (WOULD_MIGRATE if node_plan.reshape else UNCHANGED if node_plan.empty
                         else WOULD_UPDATE)
        result.moves = simulation.moves
        return _Prepared(node, root, report, allocations, result)

    # -- phase 2 -----------------------------------------------------------------

    def _write(self, prepared: _Prepared) -> None:
        node, result = prepared.node, prepared.result
        simulation = result.simulation
        assert simulation is not None
        if simulation.plan.empty:
            result.status = UNCHANGED  # nothing to write: no call at all
            return
        start, writes = self.placement.calls, self.placement.writes
        tracker = ResourceTracker(
            node.nodename, self.driver,
            PrefetchedReport(prepared.report, node.nodename, prepared.allocations),
            compute_nodes=[ComputeNode(prepared.root, node.nodename)],
            disabled=node.disabled, allocations_every_update=False)
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
            result.status = MIGRATED if reshaped else UPDATED
            result.moves = list(self.driver.moves)
            if self.verify:
                self._check(prepared)
        result.calls += self.placement.calls - start
        result.writes = self.placement.writes - writes

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
            [move for move in result.moves if move.changes_totals], names)
        result.violations += [
            invariants.Violation("not_as_planned", None, None, "", problem)
            for problem in plan.unplanned(simulation.plan, simulation.tree_after, tree,
                                          simulation.allocations_after, after)]
        result.tree_after = copy.deepcopy(tree)
        if result.violations:
            result.status = INVARIANT

    # -- the run -----------------------------------------------------------------

    @property
    def calls(self) -> int:
        """Placement requests made so far."""
        return self.placement.calls

    @property
    def pending(self) -> int:
        """Nodes checked and waiting to be written."""
        return len(self._prepared)

    @property
    def refused(self) -> bool:
        """Whether the check found anything on any of this run's nodes."""
        return any(result.status == REFUSED for result in self.results)

    def run(self) -> list[NodeResult]:
        """Check every node, then (unless a dry run or refused) write them.

        Results come in the order the host descriptions give the nodes.
        """
        self.check()
        if self.refused:
            self.abandon()
        elif not self.dry_run:
            self.write()
        return self.ordered_results()

    def ordered_results(self) -> list[NodeResult]:
        order = {name: index for index, name in enumerate(self.nodes)}
        return sorted(self.results, key=lambda result: order[result.nodename])

    def check(self) -> None:
        """Phase 1: read and check every node; nothing is written."""
        listing = self._listing()
        work = [node for node in self.mine if not node.is_ironic]
        for node in self.mine:
            if node.is_ironic:
                self.results.append(NodeResult(node.nodename, SKIPPED))
        for index, node in enumerate(work):
            item = self._prepare(node, listing)
            if item is not None:
                self._prepared.append(item)
            self.progress("check", index + 1, len(work))

    def abandon(self) -> None:
        """Give up the write (another node was refused): the checked nodes are not run."""
        for item in self._prepared:
            item.result.status = NOT_RUN
        self._prepared = []

    def write(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Phase 2: write the checked nodes one by one.

        Stops after a node that failed or broke an invariant, or before the
        next node once ``stop()`` is true (another worker failed); the nodes
        left are ``not-run``.
        """
        prepared, self._prepared = self._prepared, []
        for index, item in enumerate(prepared):
            if stop():
                for rest in prepared[index:]:
                    rest.result.status = NOT_RUN
                return
            self._write(item)
            # Drop the node's cache and reads as soon as it is done.
            item.report = None  # type: ignore[assignment]
            item.allocations = {}
            self.progress("migrate", index + 1, len(prepared))
            if item.result.status in STOPPING:
                for rest in prepared[index + 1:]:
                    rest.result.status = NOT_RUN
                return


def summarize(results: Sequence[NodeResult]) -> dict[NodeStatus, int]:
    """status -> number of nodes."""
    counts: dict[NodeStatus, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return counts
