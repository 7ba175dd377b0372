"""Nodes read over the Placement API with what the API offers in bulk.

The API has no request that returns several providers' inventories or
allocations, so a node's check read costs a request per provider for its
inventories, and one per provider for its allocations: the root's always,
the others' (a :class:`SurveyReader` not asked for ``whole`` nodes) only
when the check needs them (``NodeState.unread``, see
:func:`~nova_reshape.compute.readers.check_read`). Everything else the
check needs is read once per run for the whole cloud (:class:`CloudSurvey`):

* providers, names, parents and generations: the run's one listing
  (``GET /resource_providers`` at 1.14, which the run makes anyway);
* traits: ``GET /traits?associated=true``, then one
  ``GET /resource_providers?required=T`` per trait in use;
* sharing: ``GET /resource_providers?required=MISC_SHARES_VIA_AGGREGATE``,
  each sharing provider's aggregates and inventories, and one
  ``member_of`` listing per such aggregate. Aggregates matter to the
  migration only there (the plan never changes one, and nothing shows
  them), so a provider's aggregates are the ones it shares with a sharing
  provider.

Over HTTP the per-provider and per-consumer reads of a node go several at
once (:func:`~nova_reshape.transport.http.parallel_reads`): they are known
in advance and independent, and each waits mostly for the service.

The survey is read between the listing and the nodes' reads. Changing a
provider's traits, aggregates (1.19+), inventories or allocations bumps its
generation, so a node whose every provider answers its inventories at the
generation of the listing is as the survey saw it; any other node, and any
node read a second time (before a write, after a conflict), is read the
way nova's report client reads it (:class:`ReportClientReader`).

With the journal file of earlier runs (``--journal``), a node the file
vouches for (:mod:`~nova_reshape.journal.vouched`: its last record is an
outcome whose read-back was the tree's listing) and listed with every
provider's uuid, name, parent and recorded generation has the recorded
inventories and traits: only its root's allocations are read, and the
answer's generation must still be the listed one. Its other providers are
as the run's listing showed them (the run's start), where a read without
the file would see them as the node's read finds them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, NamedTuple, TypeVar

from sqlalchemy.engine import Engine

from nova_reshape import exception
from nova_reshape.compute.readback import WrittenTree, as_listed
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.journal import vouched
from nova_reshape.journal.snapshot import Snapshot
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report import NESTED_PROVIDER_API_VERSION, SchedulerReportClient
from nova_reshape.report.providers import query
from nova_reshape.transport.base import Placement
from nova_reshape.transport.http import service_url
from placement_wsgi.constants import SHARING_TRAIT

#: ``required`` on ``GET /resource_providers``.
REQUIRED_VERSION = "1.18"

Item = TypeVar("Item")
Read = TypeVar("Read")


def each(read: Callable[[Item], Read], items: Iterable[Item], parallel: int = 1) -> list[Read]:
    """``read(item)`` for every item, in the items' order, up to ``parallel`` at
    once (threads); the first exception a read raises reaches the caller."""
    items = list(items)
    if parallel <= 1 or len(items) <= 1:
        return [read(item) for item in items]
    with ThreadPoolExecutor(min(parallel, len(items))) as pool:
        return list(pool.map(read, items))


def _hold(held: dict[str, dict[str, Any]], rp: str, listing: Mapping[str, Any]) -> None:
    """Add provider ``rp``'s allocation listing (consumer -> its resources there) to
    ``held`` (consumer -> partial body)."""
    for consumer, entry in listing.items():
        body = held.setdefault(consumer, {"allocations": {}})
        body["allocations"][rp] = {"resources": dict(entry["resources"])}


def in_tree_allocations(report: SchedulerReportClient, providers: Iterable[str],
                        parallel: int = 1) -> dict[str, dict[str, Any]]:
    """consumer -> its allocations on ``providers`` only, from one allocation
    listing per provider (the partial bodies of :class:`NodeState`), up to
    ``parallel`` listings at once."""
    held: dict[str, dict[str, Any]] = {}
    providers = list(providers)
    listings = each(partial(report.get_allocations_for_resource_provider, None), providers,
                    parallel)
    for rp, listing in zip(providers, listings, strict=True):
        _hold(held, rp, listing.allocations)
    return held


def allocations_at(report: SchedulerReportClient, rp: str,
                   ) -> tuple[dict[str, dict[str, Any]], int]:
    """As :func:`in_tree_allocations` for one provider, with the provider's
    generation the same answer gives."""
    response = report.get(f"/resource_providers/{rp}/allocations")
    if response.status_code != 200:
        raise exception.ResourceProviderAllocationRetrievalFailed(rp_uuid=rp,
                                                                  error=response.text)
    body = response.json()
    held: dict[str, dict[str, Any]] = {}
    _hold(held, rp, body["allocations"])
    return held, body["resource_provider_generation"]


class ReportClientReader:
    """Each node through a fresh report client on ``placement``, as nova reads its
    tree; consumers partial until completed (see the module docstring).
    ``parallel``: independent reads sent at once (1 unless ``placement`` is known
    to take several)."""

    def __init__(self, placement: Placement, parallel: int = 1) -> None:
        self.placement = placement
        self.parallel = parallel
        self._kept: dict[str, NodeState] = {}

    def begin(self, trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        pass

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        for root, name in names.items():
            yield self._read(root, name)

    def _read(self, root: str, name: str) -> NodeState:
        report = SchedulerReportClient(self.placement)
        tree = report.get_provider_tree_and_ensure_root(None, root, name=name)
        held = in_tree_allocations(report, tree.get_provider_uuids(name), self.parallel)
        return NodeState(root, tree, held, frozenset(held))

    def complete(self, state: NodeState, consumers: Collection[str]) -> NodeState:
        wanted = state.partial & set(consumers)
        if not wanted:
            return state
        report = SchedulerReportClient(self.placement)
        allocations = dict(state.allocations)
        consumers = sorted(wanted)
        bodies = each(partial(report.get_allocs_for_consumer, None), consumers, self.parallel)
        allocations.update(zip(consumers, bodies, strict=True))
        return state._replace(allocations=allocations, partial=state.partial - wanted)

    def read_unread(self, state: NodeState) -> NodeState:
        if not state.unread:
            return state
        report = SchedulerReportClient(self.placement)
        allocations = dict(state.allocations)
        for consumer, body in in_tree_allocations(report, sorted(state.unread),
                                                  self.parallel).items():
            if consumer in allocations and consumer not in state.partial:
                continue  # whole already: its body has every provider's share
            held = allocations.get(consumer, {"allocations": {}})
            allocations[consumer] = {"allocations": held["allocations"] | body["allocations"]}
        added = frozenset(allocations) - frozenset(state.allocations)
        return state._replace(allocations=allocations, partial=state.partial | added,
                              unread=frozenset())

    def keep(self, state: NodeState) -> None:
        self._kept[state.root] = state

    def read_back(self, names: Mapping[str, str],
                  written: Mapping[str, WrittenTree]) -> Iterator[NodeState]:
        """The tree's listing: the node as planned when it shows only the node's
        own writes (:func:`~nova_reshape.compute.readback.as_listed`), else each
        provider's inventories and allocations too; traits and aggregates are the
        planned ones: every PUT of them was checked against its answer as it was
        written, and the others were not written."""
        for root in names:
            report = SchedulerReportClient(self.placement)
            records = report.get_providers_in_tree(None, root)
            listed = as_listed(written[root], records)
            if listed is not None:
                yield listed
                continue
            planned = written[root].tree
            tree = ProviderTree()
            tree.populate_from_iterable(records)
            uuids = [record["uuid"] for record in records]
            inventories = each(partial(report.providers.get_inventory, None), uuids,
                               self.parallel)
            for record, inventory in zip(records, inventories, strict=True):
                rp = record["uuid"]
                tree.update_inventory(rp, (inventory or {"inventories": {}})["inventories"],
                                      generation=record["generation"])
                if planned.exists(rp):
                    data = planned.data(rp)
                    tree.update_traits(rp, data.traits)
                    tree.update_aggregates(rp, data.aggregates)
            held = in_tree_allocations(report, uuids, self.parallel)
            yield NodeState(root, tree, held, frozenset(held))

    def again(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        for root, name in names.items():
            kept = self._kept.pop(root, None)
            yield kept if kept is not None and self._current(kept, name) else self._read(
                root, name)

    def _current(self, state: NodeState, name: str) -> bool:
        """Whether one listing of the tree shows the providers of ``state`` (names,
        parents) each at the generation read: then nothing of their inventories,
        traits, aggregates (1.19+) or allocations changed since."""
        response = self.placement.request(
            "GET", f"/resource_providers?in_tree={state.root}",
            microversion=NESTED_PROVIDER_API_VERSION)
        if response.status_code != 200:
            return False
        now = vouched.listed(response.json()["resource_providers"])
        tree = state.tree
        then = {rp: (tree.data(rp).name, tree.data(rp).parent_uuid, tree.data(rp).generation)
                for rp in tree.get_provider_uuids(name)}
        return now == then


class CloudSurvey(NamedTuple):
    """What the run reads once for the whole cloud (see the module docstring)."""

    #: root uuid -> its providers as listed (1.14).
    trees: Mapping[str, Sequence[Mapping[str, Any]]]
    #: provider uuid -> its traits (absent: none).
    traits: Mapping[str, frozenset[str]]
    #: provider uuid -> the aggregates it shares with a sharing provider.
    aggregates: Mapping[str, frozenset[str]]
    #: sharing provider uuid -> (listing record, inventories).
    sharing: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]]
    #: aggregate uuid -> the sharing providers in it.
    sharing_in: Mapping[str, frozenset[str]]


def _listed(report: SchedulerReportClient, params: Mapping[str, str]) -> list[dict[str, Any]]:
    response = report.get(f"/resource_providers?{query(params)}", version=REQUIRED_VERSION)
    if response.status_code != 200:
        raise RuntimeError(f"listing providers {params} failed: {response.status_code} "
                           f"{response.text}")
    return response.json()["resource_providers"]


def _traits(report: SchedulerReportClient) -> dict[str, frozenset[str]]:
    response = report.get("/traits?associated=true", version="1.6")
    if response.status_code != 200:
        raise RuntimeError(f"listing traits failed: {response.status_code} {response.text}")
    held: dict[str, set[str]] = {}
    for trait in sorted(response.json()["traits"]):
        for provider in _listed(report, {"required": trait}):
            held.setdefault(provider["uuid"], set()).add(trait)
    return {rp: frozenset(traits) for rp, traits in held.items()}


def survey(report: SchedulerReportClient,
           trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> CloudSurvey:
    """The survey of the cloud listed in ``trees`` (root -> providers)."""
    traits = _traits(report)
    sharing, sharing_in = {}, {}
    members: dict[str, set[str]] = {}
    for provider in _listed(report, {"required": SHARING_TRAIT}):
        uuid = provider["uuid"]
        inventory = report.providers.get_inventory(None, uuid) or {"inventories": {}}
        sharing[uuid] = (provider, inventory["inventories"])
        for aggregate in report.providers.get_provider_aggregates(None, uuid).aggregates:
            sharing_in.setdefault(aggregate, set()).add(uuid)
    for aggregate in sorted(sharing_in):
        for member in _listed(report, {"member_of": aggregate}):
            members.setdefault(member["uuid"], set()).add(aggregate)
    return CloudSurvey(trees, traits, {rp: frozenset(aggs) for rp, aggs in members.items()},
                       sharing, {agg: frozenset(rps) for agg, rps in sharing_in.items()})


class SurveyReader(ReportClientReader):
    """Over the API: each node's first read from the run's survey and two requests
    per provider; every other read as the report client reads (module docstring)."""

    def __init__(self, placement: Placement, parallel: int = 1, whole: bool = True,
                 journal: Engine | None = None) -> None:
        super().__init__(placement, parallel)
        #: False: a surveyed node's allocations off its root are read only when the
        #: check needs them (:func:`~nova_reshape.compute.readers.check_read`).
        self.whole = whole
        #: The journal file of earlier runs (the run's open engine on it): a node it
        #: vouches for, listed as recorded, is not read but its root's allocations
        #: (only when not ``whole``).
        self.journal = None if whole else journal
        self.survey: CloudSurvey | None = None
        self._surveyed: set[str] = set()

    def begin(self, trees: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        self.survey = survey(SchedulerReportClient(self.placement), trees)
        self._surveyed = set()

    def read(self, names: Mapping[str, str]) -> Iterator[NodeState]:
        recorded = self._recorded(names)
        for root, name in names.items():
            state = None
            if self.survey is not None and root not in self._surveyed:
                self._surveyed.add(root)
                state = self._from_survey(self.survey, root, recorded.get(root))
            yield state if state is not None else self._read(root, name)

    def _recorded(self, names: Mapping[str, str]) -> Mapping[str, Snapshot]:
        """root -> what the journal file vouches for, among the roots of ``names``
        to be read from the survey (one look-up per batch)."""
        service = service_url(self.placement)
        if self.journal is None or self.survey is None or service is None:
            return {}
        return vouched.recorded(self.journal, [
            root for root in names if root not in self._surveyed and root in self.survey.trees],
            service)

    def _from_survey(self, cloud: CloudSurvey, root: str,
                     recorded: Snapshot | None = None) -> NodeState | None:
        """The node from the survey and its providers' inventories and allocations;
        None when a provider moved since the listing (or the tree is not listed).
        With ``recorded`` (the journal file vouches for the node) listed as it
        was, the inventories and traits are the recorded ones and only the root's
        allocations are read (none when the root moved since the listing)."""
        records = cloud.trees.get(root)
        if not records:
            return None
        report = SchedulerReportClient(self.placement)
        tree = ProviderTree()
        tree.populate_from_iterable(records)
        uuids = [record["uuid"] for record in records]
        if recorded is not None and vouched.matches(recorded, records):
            return self._as_recorded(report, cloud, tree, records, recorded)
        bodies = each(partial(report.providers.get_inventory, None), uuids, self.parallel)
        for record, body in zip(records, bodies, strict=True):
            if body is None or body["resource_provider_generation"] != record["generation"]:
                return None
            self._associate(tree, cloud, record["uuid"], body["inventories"],
                            record["generation"])
        self._add_sharing(tree, cloud, records)
        read = uuids if self.whole else [root]
        held = in_tree_allocations(report, read, self.parallel)
        return NodeState(root, tree, held, frozenset(held), frozenset(uuids) - set(read))

    def _as_recorded(self, report: SchedulerReportClient, cloud: CloudSurvey,
                     tree: ProviderTree, records: Sequence[Mapping[str, Any]],
                     recorded: Snapshot) -> NodeState | None:
        """The node listed as ``recorded`` vouches for: its inventories and traits
        from the record, aggregates and sharing providers from the survey, and its
        root's allocations, read (None when that answer shows the root moved since
        the listing: the node is read in full then)."""
        for record in records:
            rp = record["uuid"]
            self._associate(tree, cloud, rp, recorded.inventories[rp], record["generation"],
                            recorded.traits[rp])
        self._add_sharing(tree, cloud, records)
        held, generation = allocations_at(report, recorded.root)
        if generation != tree.data(recorded.root).generation:
            return None
        unread = frozenset(record["uuid"] for record in records) - {recorded.root}
        return NodeState(recorded.root, tree, held, frozenset(held), unread)

    def _add_sharing(self, tree: ProviderTree, cloud: CloudSurvey,
                     records: Sequence[Mapping[str, Any]]) -> None:
        """The sharing providers of the tree's aggregates, as roots of their own."""
        for record in records:
            for aggregate in cloud.aggregates.get(record["uuid"], ()):
                for uuid in cloud.sharing_in.get(aggregate, ()):
                    if not tree.exists(uuid):
                        shared, inventories = cloud.sharing[uuid]
                        tree.new_root(shared["name"], uuid, generation=shared["generation"])
                        self._associate(tree, cloud, uuid, inventories, shared["generation"])

    @staticmethod
    def _associate(tree: ProviderTree, cloud: CloudSurvey, uuid: str,
                   inventories: Mapping[str, Any], generation: int,
                   traits: Iterable[str] | None = None) -> None:
        """A provider's inventories, traits (the survey's unless given) and
        aggregates (the survey's) at ``generation``."""
        tree.update_inventory(uuid, dict(inventories), generation=generation)
        tree.update_traits(uuid, cloud.traits.get(uuid, ()) if traits is None else traits,
                           generation=generation)
        tree.update_aggregates(uuid, cloud.aggregates.get(uuid, ()), generation=generation)

