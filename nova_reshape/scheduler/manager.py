"""SchedulerManager.select_destinations: the filter scheduler on top of Placement.

For a RequestSpec and the instance uuids of one
request:

1. prefilters edit the spec (root traits, AZ aggregates, device-profile
   groups); a refusal is NoValidHost;
2. the spec becomes a ResourceRequest and one ``GET
   /allocation_candidates`` (1.36) is sent, plus the VCPU fallback query
   when CPU pinning was translated to ``PCPU`` (requests concatenated,
   summaries merged); no candidate is NoValidHost;
3. one HostState per compute node among the summaries' roots, each with a
   copy of the allocation requests that involve its tree (sources.py);
4. per instance: filter, weigh, pick (chosen host first, rest in weighed
   order), then walk that list claiming each host's **first** remaining
   candidate with ``PUT /allocations`` (``consumer_generation: null``); a
   failed claim (someone else took the capacity) moves on to the next host.
   The claimed host is consumed (RAM, disk, vCPU, counters, group hosts)
   before the next instance, which starts from this instance's list;
5. if some instance cannot be placed, every claim made so far is deleted
   and NoValidHost names the filter that emptied the list and, per host,
   why it was dropped (filter reason or failed claim);
6. alternates: up to ``max_attempts - 1`` more hosts per instance from the
   same cell, none of them selected for any instance, each with its own
   first candidate, **unclaimed** (with several instances the list is
   filtered and weighed once more first);
7. accelerators (the conductor's step, done here when a client is given):
   ARQs of the flavor's device profile are matched to the claimed
   candidate's ``mappings`` and bound to the instance and node.

The result is one list of :class:`Selection` per instance, ``[selected,
alt1, alt2]``. A rebuild (``_nova_check_type=rebuild``) or a caller without
instance uuids takes nova's legacy path: no Placement query, nothing
claimed, selections whose allocation request is ``"null"``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler import resource_request as rr
from nova_reshape.scheduler.accelerator_seam import (
    GROUP_PREFIX,
    AcceleratorClient,
    create_and_bind,
    device_profile_name,
)
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import NoValidHost
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.nodes import NodeCatalog, PlacementNodes, StaticNodes
from nova_reshape.scheduler.pipeline import FilterScheduler, InstanceTrace
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.scenario import attach_aggregates, build_host_state
from nova_reshape.scheduler.selection import Selection
from nova_reshape.scheduler.sources import host_states_from_allocation_candidates
from placement_wsgi.constants import SHARING_TRAIT

LOG = logging.getLogger(__name__)

NOT_ENOUGH_HOSTS = "There are not enough hosts available."


@dataclass
class Claimed:
    """One placed instance: its host, the claimed allocation request and mappings."""

    instance_uuid: str
    host: HostState
    allocation_request: dict[str, Any] | None
    trace: InstanceTrace
    accel_uuids: list[str] = field(default_factory=list)

    @property
    def mappings(self) -> dict[str, list[str]]:
        return dict((self.allocation_request or {}).get("mappings", {}))


class SchedulerManager:
    """nova's scheduler manager over a SchedulerReportClient.

    ``nodes``: a :class:`NodeCatalog` or ``{uuid: host entry}`` (only those
    are compute nodes); default :class:`PlacementNodes` (every root
    provider, named after it). ``aggregates``: host aggregates (service
    host names, metadata, uuid) for filters, weighers and the AZ prefilter.
    ``accelerators``: the Cyborg seam (device profiles and ARQs).
    ``rng`` makes the subset choice reproducible.
    """

    def __init__(self, report: Any, conf: SchedulerConfig | None = None, *,
                 nodes: NodeCatalog | Mapping[str, Mapping[str, Any]] | None = None,
                 aggregates: Sequence[Aggregate] = (),
                 accelerators: AcceleratorClient | None = None,
                 scheduler: FilterScheduler | None = None,
                 require_owner_nova: bool | None = None,
                 rng: random.Random | None = None) -> None:
        self.report = report
        self.conf = conf or SchedulerConfig()
        if nodes is None:
            nodes = PlacementNodes(report)
        elif isinstance(nodes, Mapping):
            nodes = StaticNodes(nodes)
        self.nodes: NodeCatalog = nodes
        self.aggregates = list(aggregates)
        self.accelerators = accelerators
        self.scheduler = scheduler or FilterScheduler(self.conf)
        self.require_owner_nova = require_owner_nova
        self.rng = rng or random.Random()
        #: Traces of the last call (one per instance, plus the alternates pass).
        self.last_traces: list[InstanceTrace] = []
        #: What each request pre-filter did in the last call.
        self.last_prefilters: list[prefilters.PrefilterStep] = []

    # -- entry point -------------------------------------------------------

    def select_destinations(self, context: Any, spec: RequestSpec,
                            instance_uuids: Sequence[str] | None = None,
                            return_objects: bool = True, return_alternates: bool = True
                            ) -> list[list[Selection]] | list[dict[str, Any]]:
        """Place every instance of ``spec``; raises NoValidHost (nothing stays claimed)."""
        num_alts = self.conf.scheduler.max_attempts - 1 if return_alternates else 0
        self.last_traces = []
        if instance_uuids is None or spec.is_rebuild:
            uuids = list(instance_uuids or [None] * spec.num_instances)
            version = None
            claimed, hosts = self._schedule(context, spec, uuids, self._all_host_states(spec),
                                            version)
        else:
            body, version = self._candidates(context, spec)
            hosts = self._host_states(body, spec)
            claimed, hosts = self._schedule(context, spec, list(instance_uuids), hosts,
                                            version)
            self._bind_accelerators(context, spec, claimed)
        selections = self._with_alternates(spec, claimed, hosts, num_alts, version)
        if not return_objects:
            return [group[0].to_legacy_dict() for group in selections]
        return selections

    # -- Placement ---------------------------------------------------------

    def build_request(self, spec: RequestSpec, translate_pinning: bool = True
                      ) -> rr.ResourceRequest:
        """The ResourceRequest for ``spec`` (after prefilters) under this manager's config."""
        return rr.from_request_spec(
            spec, max_placement_results=self.conf.scheduler.max_placement_results,
            translate_pinning=translate_pinning,
            pci_in_placement=self.conf.filter_scheduler.pci_in_placement,
            require_owner_nova="OWNER_NOVA" in spec.root_required,
            compute_nodes=self.nodes.lookup)

    def _candidates(self, context: Any, spec: RequestSpec) -> tuple[dict[str, Any], str]:
        try:
            self.last_prefilters = prefilters.run_prefilters(
                spec, aggregates=self.aggregates, resolver=self.accelerators,
                require_owner_nova=self.require_owner_nova, conf=self.conf)
        except prefilters.RequestFilterFailed as error:
            raise NoValidHost(f"No valid host was found. {error}") from error
        request = self.build_request(spec)
        requests, summaries, version = self.report.get_allocation_candidates(context, request)
        allocation_requests = list(requests or [])
        provider_summaries = dict(summaries or {})
        if request.cpu_pinning_requested and \
                not self.conf.workarounds.disable_fallback_pcpu_query:
            fallback = self.build_request(spec, translate_pinning=False)
            more, more_summaries, more_version = self.report.get_allocation_candidates(
                context, fallback)
            allocation_requests += list(more or [])
            provider_summaries.update(more_summaries or {})
            version = version or more_version
        if not allocation_requests:
            LOG.info("Got no allocation candidates from the Placement API. This could be "
                     "due to insufficient resources or a temporary occurrence as compute "
                     "nodes start up.")
            raise NoValidHost("No valid host was found. Placement returned no allocation "
                              f"candidates for {request.to_querystring()}")
        return ({"allocation_requests": allocation_requests,
                 "provider_summaries": provider_summaries}, version)

    def _host_states(self, body: dict[str, Any], spec: RequestSpec) -> list[HostState]:
        """HostStates of the compute nodes among the summaries' roots (nova's key lookup)."""
        summaries = body["provider_summaries"]
        roots = [uuid for uuid, summary in summaries.items()
                 if summary.get("root_provider_uuid", uuid) == uuid
                 and SHARING_TRAIT not in (summary.get("traits") or ())]
        entries = self.nodes.entries(roots)
        kept = {uuid: summary for uuid, summary in summaries.items()
                if summary.get("root_provider_uuid", uuid) != uuid or uuid in entries}
        states = host_states_from_allocation_candidates(
            {"allocation_requests": body["allocation_requests"], "provider_summaries": kept},
            entries, self.aggregates,
            service_down_time=self.conf.DEFAULT.service_down_time, deep_copy=False)
        return self._in_cell(states, spec)

    def _all_host_states(self, spec: RequestSpec) -> list[HostState]:
        """Legacy path: every known compute node, without candidates."""
        now = time.time()
        states = [build_host_state({"uuid": uuid, **entry}, now=now,
                                   service_down_time=self.conf.DEFAULT.service_down_time,
                                   where=f"node {uuid}")
                  for uuid, entry in self.nodes.entries(None).items()]
        attach_aggregates(states, self.aggregates)
        return self._in_cell(states, spec)

    @staticmethod
    def _in_cell(states: list[HostState], spec: RequestSpec) -> list[HostState]:
        destination = spec.requested_destination
        if destination is None or not destination.cell or destination.allow_cross_cell_move:
            return states
        return [state for state in states if state.cell_uuid == destination.cell_uuid]

    # -- the per-instance loop ---------------------------------------------

    def _schedule(self, context: Any, spec: RequestSpec, instance_uuids: list[Any],
                  hosts: list[HostState], version: str | None
                  ) -> tuple[list[Claimed], list[HostState]]:
        """Place each instance in turn; returns the placements and the last sorted list."""
        claimed: list[Claimed] = []
        current = hosts
        try:
            for index, instance_uuid in enumerate(instance_uuids):
                spec.instance_uuid = instance_uuid
                trace = InstanceTrace(index, instance_uuid)
                self.last_traces.append(trace)
                passed = self.scheduler.get_filtered_hosts(current, spec, index, trace)
                trace.weighed = self.scheduler.get_weighed_hosts(passed, spec)
                if not trace.weighed:
                    self._fail(context, claimed, trace, {})
                current = self.scheduler.pick(trace, self.rng)
                if version is None:
                    host, request, failures = current[0], None, {}
                else:
                    host, request, failures = self._claim_first(
                        context, spec, instance_uuid, current, version)
                if host is None:
                    self._fail(context, claimed, trace, failures)
                trace.selected = host
                claimed.append(Claimed(instance_uuid, host, request, trace))
                self._record_mappings(spec, request)
                self.scheduler.consume(host, spec, instance_uuid)
        except NoValidHost:
            raise
        except BaseException:
            self._cleanup(context, claimed)
            raise
        return claimed, current

    def _claim_first(self, context: Any, spec: RequestSpec, instance_uuid: str,
                     hosts: list[HostState], version: str
                     ) -> tuple[Any, dict[str, Any] | None, dict[str, str]]:
        """Claim the first candidate of the first host that accepts it."""
        failures: dict[str, str] = {}
        for host in hosts:
            if not host.allocation_candidates:
                failures[host.label] = "claim: no allocation candidate left"
                continue
            request = host.allocation_candidates[0]
            ok = self.report.claim_resources(context, instance_uuid, request, spec.project_id,
                                             spec.user_id, allocation_request_version=version)
            if ok:
                return host, request, failures
            failures[host.label] = ("claim: Placement refused its first allocation candidate "
                                    "(capacity taken by another request?)" if ok is False
                                    else "claim: Placement could not be reached")
            LOG.debug("Claim of %s on %s failed; trying the next host", instance_uuid,
                      host.label)
        return None, None, failures

    @staticmethod
    def _record_mappings(spec: RequestSpec, request: dict[str, Any] | None) -> None:
        """Fill provider_uuids of the spec's outside groups from the claimed mappings."""
        mappings = (request or {}).get("mappings", {})
        for group in spec.requested_resources:
            if group.requester_id in mappings:
                group.provider_uuids = list(mappings[group.requester_id])

    def _fail(self, context: Any, claimed: list[Claimed], trace: InstanceTrace,
              claim_failures: Mapping[str, str]) -> None:
        self._cleanup(context, claimed)
        reasons = trace.reasons()
        reasons.update(claim_failures)
        # Hosts dropped for an earlier instance never came back: say why.
        for earlier in self.last_traces:
            if earlier is not trace:
                for label, why in earlier.reasons().items():
                    reasons.setdefault(label, f"{why} (for instance {earlier.index})")
        raise NoValidHost(f"No valid host was found. {NOT_ENOUGH_HOSTS}",
                          instance_index=trace.index, filter_name=trace.emptied_by(),
                          reasons=reasons)

    def _cleanup(self, context: Any, claimed: list[Claimed]) -> None:
        """Delete the allocations (force) and ARQs of instances placed so far."""
        for placed in claimed:
            if placed.allocation_request is not None:
                try:
                    self.report.delete_allocation_for_instance(context, placed.instance_uuid,
                                                               force=True)
                except Exception:  # keep cleaning the others
                    LOG.exception("Could not delete allocations of %s", placed.instance_uuid)
            if placed.accel_uuids and self.accelerators is not None:
                self.accelerators.delete_arqs_by_uuid(placed.accel_uuids)

    # -- accelerators ------------------------------------------------------

    def _bind_accelerators(self, context: Any, spec: RequestSpec,
                           claimed: list[Claimed]) -> None:
        name = device_profile_name(spec.flavor.extra_specs)
        if name is None or self.accelerators is None:
            return
        try:
            for placed in claimed:
                mappings = {key: value for key, value in placed.mappings.items()
                            if key.startswith(GROUP_PREFIX)}
                placed.accel_uuids = create_and_bind(
                    self.accelerators, name, placed.instance_uuid, placed.host.nodename,
                    mappings)
        except BaseException:
            self._cleanup(context, claimed)
            raise

    # -- alternates --------------------------------------------------------

    def _with_alternates(self, spec: RequestSpec, claimed: list[Claimed],
                         hosts: list[HostState], num_alts: int, version: str | None
                         ) -> list[list[Selection]]:
        """Selections per instance: the placement, then unclaimed same-cell alternates."""
        zone = self.conf.DEFAULT.default_availability_zone
        if num_alts > 0 and len(claimed) > 1:
            index = len(claimed) - 1
            trace = InstanceTrace(index, spec.instance_uuid)
            self.last_traces.append(trace)
            passed = self.scheduler.get_filtered_hosts(hosts, spec, index, trace)
            trace.weighed = self.scheduler.get_weighed_hosts(passed, spec)
            hosts = self.scheduler.pick(trace, self.rng) if trace.weighed else []
        selected = [placed.host for placed in claimed]
        result = []
        for placed in claimed:
            group = [Selection.from_host_state(placed.host, placed.allocation_request, version,
                                               zone)]
            group[0].accel_uuids = list(placed.accel_uuids)
            for host in hosts:
                if len(group) >= num_alts + 1:
                    break
                if host.cell_uuid != placed.host.cell_uuid or any(
                        host is other for other in selected):
                    continue
                if version is not None:
                    if not host.allocation_candidates:
                        continue
                    group.append(Selection.from_host_state(
                        host, host.allocation_candidates[0], version, zone))
                else:
                    group.append(Selection.from_host_state(host, None, None, zone))
            result.append(group)
        return result

