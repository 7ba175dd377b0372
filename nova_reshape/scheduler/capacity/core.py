"""One flavor's capacity over the whole cloud: one candidates pass, the filters, the counts.

:class:`CapacityCheck` holds what every flavor shares (the scheduler's
configuration and filters, nova's aggregates, the HostState source, whether
``OWNER_NOVA`` is required); :meth:`CapacityCheck.flavor` answers for one
flavor with ``ask``, the Placement reader of the live explain (a query ->
:class:`~nova_reshape.scheduler.live.placement.PlacementView`: candidates
and, from the database, the reason each other root is not one):

1. the RequestSpec of a boot of the flavor and the request pre-filters
   (:func:`~nova_reshape.scheduler.live.request.placement_requests`: the
   PCPU query and nova's VCPU fallback while ``[workarounds]
   disable_fallback_pcpu_query`` is false, merged as nova merges them);
2. each query asked ONCE, without ``limit``, so every root that can take
   the flavor is a candidate (nova's ``max_placement_results`` only
   shortens the list nova picks from); a query several flavors ask is
   asked once per run, and its view (merged, its roots' candidates) read
   once (:func:`once_per_query`);
3. the HostStates of the candidates (the source: Placement alone, or
   nova's cell databases), each built once per :meth:`CapacityCheck.run`
   (one read of the cloud) and forked per flavor with that flavor's
   candidates; the configured filters once over all of them (the reason of
   every host a filter drops);
4. per valid host the count of :func:`~.fit.count`, the way
   :func:`~.fit.way_of` chose for the flavor, on the fork the filters
   passed: nova's consume-then-filter loop (on a consumable fork of its
   own), or its answer in closed form where no filter check can change its
   verdict with a claim but as counted (NUMA slots of a pinned guest; the
   checks' verdict before the first claim is the filter pass's).

Every root provider Placement holds is a row: valid with its count, or
invalid with the reason (Placement's, the filter's, or why nova has no such
host).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.accelerator_seam import DeviceProfileResolver
from nova_reshape.scheduler.capacity.fit import (
    TreeRoom,
    Way,
    count,
    prepare_checks,
    room_of,
    way_of,
)
from nova_reshape.scheduler.capacity.records import CapacityReport, FlavorCapacity, HostFit
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.filters.base import HostCheck
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.live.explain import HostStateSource
from nova_reshape.scheduler.live.placement import PlacementView, QueryRefused, merged
from nova_reshape.scheduler.live.reasons import RootVerdict
from nova_reshape.scheduler.live.request import placement_requests, spec_for_flavor
from nova_reshape.scheduler.pipeline import FilterScheduler, InstanceTrace
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.sources import index_allocation_requests, requests_of_tree
from placement_wsgi import errors

#: Placement's answer for one query (pairs), as the live explain reads it.
Ask = Callable[[list[tuple[str, str]]], PlacementView]


def unlimited(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``query`` without ``limit``: every candidate of every root."""
    return [(key, value) for key, value in query if key != "limit"]


def once_per_query(ask: Ask) -> Ask:
    """``ask`` that asks each distinct query once and gives its view again to the
    flavors asking the same (flavors differing only in what Placement is not
    asked, or the VCPU fallback of pinned flavors of one size).

    Exact: a run answers for one state of the cloud (one read transaction, or
    the plan's changes in one transaction rolled back), and the view is only
    read (a pinned flavor's merged view is a new one). Placement's refusals
    are not kept: a refused query is asked again.
    """
    answers: dict[tuple[tuple[str, str], ...], PlacementView] = {}

    def asked(query: list[tuple[str, str]]) -> PlacementView:
        key = tuple(query)
        view = answers.get(key)
        if view is None:
            view = answers[key] = ask(query)
        return view

    return asked


def placement_reason(verdict: RootVerdict) -> str:
    """The explain's reason for a root that is not a candidate, on one line."""
    group = f" [group {verdict.group}]" if verdict.group else ""
    return f"Placement {verdict.reason.value}{group}: {verdict.detail}"


class CapacityCheck:
    """The capacity of flavors on one cloud state (see the module).

    ``require_owner_nova``: whether the request pre-filter asks for
    ``OWNER_NOVA`` (nova 34 does once every nova-compute is at service
    version 73; None: as nova 34 with every compute new). ``resolver``: the
    device profiles a flavor's ``accel:device_profile`` names (Cyborg's,
    see :class:`~nova_reshape.accelerator.device_profile.ProfileCatalogue`);
    a profile it cannot resolve is that flavor's reason for having no host.
    """

    def __init__(self, conf: SchedulerConfig, source: HostStateSource,
                 require_owner_nova: bool | None = None,
                 resolver: DeviceProfileResolver | None = None) -> None:
        self.conf = conf
        self.resolver = resolver
        self.source = source
        self.aggregates: list[Aggregate] = source.aggregates()
        self.require_owner_nova = require_owner_nova
        self.scheduler = FilterScheduler(conf)
        #: root uuid -> its HostState as the source built it, and when (time.time())
        self._known: dict[str, tuple[HostState, float]] = {}
        self._tried: set[str] = set()
        self._skipped: dict[str, str] = {}
        self._candidates: dict[str, list[dict[str, Any]]] = {}
        #: per run: merged views by the ids of their parts; per view (by id) its
        #: roots and their candidates (each kept with the objects whose ids it uses)
        self._merges: dict[tuple[int, ...], tuple[list[PlacementView], PlacementView]] = {}
        self._per_view: dict[int, tuple[PlacementView, list[str],
                                        dict[str, list[dict[str, Any]]],
                                        dict[tuple[str, str], int]]] = {}
        #: the roots of the last view, and them sorted by name
        self._roots_sorted: tuple[dict[str, str], list[tuple[str, str]]] | None = None

    def run(self, flavors: Iterable[Flavor], ask: Ask) -> CapacityReport:
        """Every flavor's table, in order (``ask`` reads one state of the cloud:
        the HostStates are built once for all flavors, and each distinct query is
        asked once, :func:`once_per_query`)."""
        self._known, self._tried, self._skipped = {}, set(), {}
        self._merges, self._per_view = {}, {}
        ask = once_per_query(ask)
        return CapacityReport([self.flavor(flavor, ask) for flavor in flavors])

    def flavor(self, flavor: Flavor, ask: Ask) -> FlavorCapacity:
        """One flavor's table (see the module)."""
        name = flavor.name or flavor.flavorid
        spec = spec_for_flavor(flavor, self.conf)
        try:
            requests, _ = placement_requests(spec, self.conf, self.aggregates,
                                             self.require_owner_nova, self.resolver)
        except prefilters.RequestFilterFailed as error:
            # nova asks Placement nothing: no host at all, for the reason given
            return FlavorCapacity(name, [], [f"a request filter refuses it: {error}"])
        try:
            view = self._merged([ask(unlimited(request.query_params())) for request in requests])
        except (errors.BadRequest, QueryRefused) as error:
            # an unknown class or trait: Placement answers 400, nova finds no valid host
            return FlavorCapacity(name, [], [f"Placement refuses the query, which nova takes "
                                             f"as no valid host: {error}"])
        return FlavorCapacity(name, self._hosts(spec, view))

    def _merged(self, views: list[PlacementView]) -> PlacementView:
        """nova's merge of the views, once per run for the same views (the
        PCPU query and VCPU fallback of pinned flavors of one size)."""
        key = tuple(map(id, views))
        found = self._merges.get(key)
        if found is None:
            # the views are kept with their merge: their ids stay theirs for the run
            found = self._merges[key] = (views, merged(views))
        return found[1]

    def _hosts(self, spec: RequestSpec, view: PlacementView) -> list[HostFit]:
        """Every root's row for the flavor of ``spec`` on Placement's ``view``."""
        hosts, skipped = self._host_states(view)
        reasons = {verdict.uuid: placement_reason(verdict) for verdict in view.verdicts}
        reasons.update(_skipped(skipped, view))
        trace = InstanceTrace(0, None)
        passed = self.scheduler.get_filtered_hosts(hosts, copy.copy(spec), 0, trace)
        dropped = trace.reasons()
        # the filters ran on every host passed (neither forced nor a rebuild)
        filtered = not trace.forced and not spec.is_rebuild
        valid = {id(host) for host in passed}
        checks = prepare_checks(self.scheduler.filters, spec)
        room = self._per_view[id(view)][3]
        way = way_of(self.scheduler.filters, spec)
        fits: dict[str, int] = {}
        for host in hosts:
            uuid = host.uuid or host.host
            if id(host) not in valid:
                reasons[uuid] = dropped.get(host.label, "dropped by the filters")
                continue
            fits[uuid] = self._count(host, spec, checks, way, TreeRoom(
                view.body["provider_summaries"], room), passed=filtered)
        rows = []
        for uuid, root_name in self._sorted_roots(view):
            if uuid in fits and fits[uuid] > 0:
                rows.append(HostFit(root_name, uuid, True, fits[uuid]))
            else:
                rows.append(HostFit(root_name, uuid, False, 0,
                                    reasons.get(uuid, "the filters left no candidate")))
        return rows

    def _count(self, host: HostState, spec: RequestSpec, checks: list[HostCheck], way: Way,
               room: TreeRoom, passed: bool) -> int:
        """The host's count on its candidates as Placement gave them (not as the
        filters pruned them), on the flavor's fork the filters just passed: they
        changed nothing of it but the limits (which the same checks set again, to
        the same values, before every claim) and its candidate list (which the
        count replaces); a count that consumes forks it again. ``passed``: the
        filters ran (hosts a request forces are not filtered), in the order of
        ``checks``, on these candidates (see :func:`~.fit.count`)."""
        return count(host, self._candidates[host.uuid or ""], spec, checks, room, way, passed)

    def _sorted_roots(self, view: PlacementView) -> list[tuple[str, str]]:
        """:func:`sorted_roots`, once per roots mapping (every query of one run
        reads the same roots)."""
        if self._roots_sorted is None or self._roots_sorted[0] != view.roots:
            self._roots_sorted = (view.roots, sorted_roots(view))
        return self._roots_sorted[1]

    def _host_states(self, view: PlacementView) -> tuple[list[HostState], list[str]]:
        """The candidate roots' HostStates for one flavor, and the source's lines for
        those that are no host: each root built (or refused) once per run, then
        forked with the flavor's candidates."""
        roots, self._candidates = self._trees(view)
        hosts, now = [], time.time()
        for uuid in roots:
            if uuid in self._known and self._candidates[uuid]:
                pristine, built = self._known[uuid]
                host = pristine.fork(later=now - built)
                host.allocation_candidates = list(self._candidates[uuid])
                hosts.append(host)
        return hosts, [self._skipped[uuid] for uuid in roots if uuid in self._skipped]

    def _trees(self, view: PlacementView) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
        """The roots of ``view``'s trees, and each root's candidates that is a host;
        once per view (a view asked again is the same object, see
        :func:`once_per_query`; its roots were all tried the first time), with
        its room before any claim (:func:`~.fit.room_of`)."""
        found = self._per_view.get(id(view))
        if found is not None:
            return found[1], found[2]
        room = room_of(view.body["provider_summaries"])
        body = view.body
        summaries = body["provider_summaries"]
        roots = [uuid for uuid, summary in summaries.items()
                 if summary.get("root_provider_uuid", uuid) == uuid]
        new = {uuid for uuid in roots if uuid not in self._tried}
        if new:
            part = {"allocation_requests": body.get("allocation_requests", []),
                    "provider_summaries": {uuid: summary for uuid, summary in summaries.items()
                                           if summary.get("root_provider_uuid", uuid) in new}}
            built = time.time()
            for host in self.source.host_states(part, view.roots, self.conf):
                self._known[host.uuid or ""] = (host, built)
            by_name = {view.roots.get(uuid, uuid): uuid for uuid in new}
            for line in self.source.skipped():
                name = line.partition(": ")[0]
                self._skipped[by_name.get(name, name)] = line
            self._tried |= new
        by_rp = index_allocation_requests(body)
        candidates = {uuid: by_rp.get(uuid) or requests_of_tree(uuid, summaries, by_rp)
                      for uuid in roots if uuid in self._known}
        # the view is kept with its answer: its id stays its own for the run
        self._per_view[id(view)] = (view, roots, candidates, room)
        return roots, candidates


def _skipped(lines: Sequence[str], view: PlacementView) -> dict[str, str]:
    """The source's "name: why" lines, by root uuid."""
    by_name = {name: uuid for uuid, name in view.roots.items()}
    found = {}
    for line in lines:
        name, _, why = line.partition(": ")
        if name in by_name:
            found[by_name[name]] = f"not a host in nova's database: {why}"
    return found


def sorted_roots(view: PlacementView) -> list[tuple[str, str]]:
    """(uuid, name) of every root provider, by name."""
    return sorted(view.roots.items(), key=lambda item: (item[1], item[0]))
