"""Where HostStates come from when not from a scenario file.

``host_states_from_allocation_candidates`` is the seam to Placement: it takes
the body of ``GET /allocation_candidates`` (microversion >= 1.29, as returned
by the report client) and builds one HostState per root provider, each
carrying a deep copy of the allocation requests that involve it, exactly as
nova indexes them (``alloc_reqs_by_rp_uuid``).

nova reads every other HostState field from its compute database and uses
the provider summaries only for their keys. Without that database, compute
node details can be passed as ``nodes`` (``{rp_uuid: scenario host entry}``,
the vocabulary of scheduler-scenario.md); fields not given there are derived
from the root provider's summary (our adaptation, not nova behaviour):
``VCPU``/``MEMORY_MB``/``DISK_GB`` capacity and usage, with the allocation
ratio already folded into the capacity.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.scenario import attach_aggregates, build_host_state
from placement_wsgi.constants import SHARING_TRAIT

if TYPE_CHECKING:
    from nova_reshape.scheduler.config import SchedulerConfig

_DERIVED = (("VCPU", "vcpus", "vcpus_used"), ("MEMORY_MB", "memory_mb", "memory_mb_used"),
            ("DISK_GB", "local_gb", "local_gb_used"))


def index_allocation_requests(body: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``{rp_uuid: [allocation request, ...]}`` for every provider in each request."""
    by_rp: dict[str, list[dict[str, Any]]] = {}
    for request in body.get("allocation_requests", []):
        for rp_uuid in request.get("allocations", {}):
            by_rp.setdefault(rp_uuid, []).append(request)
    return by_rp


def summary_host_entry(rp_uuid: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """A scenario host entry derived from one root provider summary."""
    resources = summary.get("resources", {})
    entry: dict[str, Any] = {"host": rp_uuid, "uuid": rp_uuid, "cpu_allocation_ratio": 1.0,
                             "ram_allocation_ratio": 1.0, "disk_allocation_ratio": 1.0}
    for resource_class, total_key, used_key in _DERIVED:
        if resource_class in resources:
            entry[total_key] = int(resources[resource_class].get("capacity", 0))
            entry[used_key] = int(resources[resource_class].get("used", 0))
    return entry


def host_states_from_allocation_candidates(
        body: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]] | None = None,
        aggregates: Iterable[Aggregate] = (), *, now: float | None = None,
        service_down_time: int = 60, deep_copy: bool = True) -> list[HostState]:
    """HostStates for the compute nodes (root providers) of a candidates response.

    Order follows ``provider_summaries``. Child providers (VGPU, PCI, NUMA
    ...) are not hosts; their allocation requests are reachable through the
    root's ``allocation_candidates``. Only roots with a candidate are kept.
    ``deep_copy=False`` gives each host its own list of the *same* request
    dicts: enough when the body belongs to one scheduling request and, as
    filters do, candidates are only dropped from lists, never edited.
    """
    if not isinstance(body, Mapping) or "provider_summaries" not in body:
        raise ScenarioError("not an allocation candidates body (no provider_summaries)")
    now = time.time() if now is None else now
    nodes = nodes or {}
    by_rp = index_allocation_requests(body)
    states = []
    for rp_uuid, summary in body["provider_summaries"].items():
        root = summary.get("root_provider_uuid", rp_uuid)
        if root != rp_uuid:
            continue
        entry = summary_host_entry(rp_uuid, summary)
        entry.update(nodes.get(rp_uuid, {}))
        state = build_host_state(entry, now=now, service_down_time=service_down_time,
                                 where=f"provider {rp_uuid}")
        candidates = requests_of_tree(rp_uuid, body["provider_summaries"], by_rp)
        if not candidates:
            continue
        state.allocation_candidates = copy.deepcopy(candidates) if deep_copy \
            else list(candidates)
        states.append(state)
    attach_aggregates(states, list(aggregates))
    return states


def requests_of_tree(root: str, summaries: Mapping[str, Any],
                      by_rp: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Allocation requests touching the root (nova's key) or, failing that, its tree."""
    if root in by_rp:
        return list(by_rp[root])
    seen: list[dict[str, Any]] = []
    for rp_uuid, summary in summaries.items():
        if summary.get("root_provider_uuid") == root:
            for request in by_rp.get(rp_uuid, []):
                if all(request is not other for other in seen):
                    seen.append(request)
    return seen


def candidate_host_states(body: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]],
                          conf: SchedulerConfig, aggregates: Iterable[Aggregate] = (),
                          keep: Callable[[str], bool] | None = None) -> list[HostState]:
    """HostStates of one scheduling request's candidates, for the live explain.

    Sharing providers (``MISC_SHARES_VIA_AGGREGATE``) lend resources and are
    no compute nodes; ``keep`` (by provider uuid) drops other summaries too.
    The request dicts are shared, not copied (see ``deep_copy``).
    """
    summaries = {uuid: summary for uuid, summary in body["provider_summaries"].items()
                 if SHARING_TRAIT not in (summary.get("traits") or ())
                 and (keep is None or keep(uuid))}
    hosts_only = {"allocation_requests": body.get("allocation_requests", []),
                  "provider_summaries": summaries}
    return host_states_from_allocation_candidates(
        hosts_only, nodes, aggregates, service_down_time=conf.DEFAULT.service_down_time,
        deep_copy=False)
