"""Live explain: the request as nova builds it, Placement's answer, the filters' verdict.

Steps: build the RequestSpec (:mod:`.request`), run the request pre-filters,
ask Placement (:mod:`.placement`) for candidates and for the reason each
other root is not one, build HostStates for the candidates through a
:class:`HostStateSource`, then run the configured filters and weighers.

The HostState source is the seam for nova's own data: the default reads
only what Placement shows (names and VCPU/MEMORY_MB/DISK_GB figures);
:class:`~nova_reshape.scheduler.live.nova_hosts.NovaDatabaseHostStates`
reads nova's cell database as nova's HostManager does. Candidates a source
cannot make a host of (nova skips them) are listed as ``skipped``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.live.placement import PlacementView, merged
from nova_reshape.scheduler.live.request import LiveRequest, build_spec, placement_requests
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.prefilter_report import render_steps, steps_to_dicts
from nova_reshape.scheduler.result import render_table, result_to_dict
from nova_reshape.scheduler.sources import candidate_host_states


class HostStateSource(Protocol):
    """Where the candidates' HostStates (and nova's host aggregates) come from."""

    def aggregates(self) -> list[Aggregate]: ...

    def host_states(self, body: Mapping[str, Any], roots: Mapping[str, str],
                    conf: SchedulerConfig) -> list[HostState]: ...

    def skipped(self) -> list[str]:
        """Candidate roots the source could not make a host of, each with why."""
        ...


class PlacementHostStates:
    """HostStates from Placement alone: host and node named after the root provider.

    ``aggregates`` (nova's, e.g. from its API database) name service hosts;
    here a host is the root provider's name (nova's hypervisor hostname).
    """

    def __init__(self, aggregates: Sequence[Aggregate] = ()) -> None:
        self._aggregates = list(aggregates)

    def aggregates(self) -> list[Aggregate]:
        return list(self._aggregates)

    def skipped(self) -> list[str]:
        return []

    def host_states(self, body: Mapping[str, Any], roots: Mapping[str, str],
                    conf: SchedulerConfig) -> list[HostState]:
        nodes = {uuid: {"host": name} for uuid, name in roots.items()}
        return candidate_host_states(body, nodes, conf, self.aggregates())


@dataclass
class LiveResult:
    request: LiveRequest
    query: str = ""
    fallback_query: str | None = None
    steps: list[prefilters.PrefilterStep] = field(default_factory=list)
    refused: str | None = None
    view: PlacementView | None = None
    schedule: Any = None
    skipped: list[str] = field(default_factory=list)

    @property
    def no_valid_host(self) -> bool:
        return self.refused is not None or self.schedule is None or \
            self.schedule.no_valid_host or not self.schedule.selected

    def to_dict(self) -> dict[str, Any]:
        view = self.view
        out: dict[str, Any] = {
            "request": {"flavor": self.request.flavor_name, "vcpus": self.request.vcpus,
                        "ram_mb": self.request.ram_mb, "disk_gb": self.request.disk_gb,
                        "ephemeral_gb": self.request.ephemeral_gb,
                        "swap_mb": self.request.swap_mb,
                        "extra_specs": dict(self.request.extra_specs or {}),
                        "image_properties": dict(self.request.image_properties or {}),
                        "availability_zone": self.request.availability_zone,
                        "project_id": self.request.project_id},
            "request_filters": steps_to_dicts(self.steps),
            "refused_by_request_filter": self.refused,
            "placement": None,
            "not_candidates": [],
            "not_hosts": list(self.skipped),
            "scheduler": None,
            "no_valid_host": self.no_valid_host,
            "selected": [],
        }
        if view is not None:
            out["placement"] = {"query": self.query, "fallback_query": self.fallback_query,
                                "roots": len(view.roots),
                                "candidate_roots": len(view.candidate_roots),
                                "allocation_requests": len(view.body.get(
                                    "allocation_requests", [])),
                                "reasons_explained": view.explained}
            out["not_candidates"] = [v.to_dict() for v in view.verdicts]
        if self.schedule is not None:
            scheduled = result_to_dict(self.schedule)
            out["scheduler"] = scheduled
            # the scenario result format has no field for them; the live one has
            out["dropped_by_filters"] = {
                label: reason for trace in self.schedule.instances
                for label, reason in trace.reasons().items()}
            out["selected"] = scheduled["selected"]
        return out


def run(live: LiveRequest, ask: Callable[[list[tuple[str, str]]], PlacementView],
        conf: SchedulerConfig, source: HostStateSource | None = None) -> LiveResult:
    """The whole live explain; ``ask`` reads Placement for a query (pairs)."""
    source = source or PlacementHostStates()
    result = LiveResult(live)
    spec = build_spec(live, conf)
    try:
        requests, result.steps = placement_requests(spec, conf, source.aggregates())
    except prefilters.RequestFilterFailed as error:
        result.steps, result.refused = error.steps, str(error)
        return result
    result.query = requests[0].to_querystring()
    result.fallback_query = requests[1].to_querystring() if len(requests) > 1 else None
    result.view = merged([ask(request.query_params()) for request in requests])
    hosts = source.host_states(result.view.body, result.view.roots, conf)
    result.skipped = source.skipped()
    scheduler = FilterScheduler(conf)
    result.schedule = scheduler.schedule(hosts, spec, [None], subset_choices=[0])
    return result


def render(result: LiveResult) -> str:
    """The readable report: request filters, Placement's verdict per root, the filters."""
    lines = [f"Request: flavor {result.request.flavor_name} ({result.request.vcpus} vCPU, "
             f"{result.request.ram_mb} MB RAM, {result.request.disk_gb} GB disk)"]
    lines.extend(render_steps(result.steps))
    if result.refused is not None:
        lines.append(f"No valid host: a request filter refused the request: {result.refused}")
        return "\n".join(lines) + "\n"
    view = result.view
    assert view is not None
    lines.append(f"Placement query: GET /allocation_candidates?{result.query}")
    if result.fallback_query:
        lines.append(f"  and nova's VCPU fallback: ?{result.fallback_query}")
    lines.append(f"Placement: {len(view.candidate_roots)} of {len(view.roots)} root "
                 f"provider(s) are candidates")
    if view.verdicts:
        lines.append("Not candidates:")
        width = max(len(v.name) for v in view.verdicts)
        for verdict in view.verdicts:
            group = f" [group {verdict.group}]" if verdict.group else ""
            lines.append(f"  {verdict.name.ljust(width)}  {verdict.reason.value}{group}: "
                         f"{verdict.detail}")
    if result.skipped:
        lines.append("Candidates that are no host in nova's database (nova skips them):")
        lines.extend(f"  {line}" for line in result.skipped)
    if result.schedule is not None and view.candidate_roots:
        lines.append("Filters and weighers on the candidates:")
        lines.append(render_table(result.schedule).rstrip("\n"))
    elif not view.candidate_roots:
        lines.append("No valid host: Placement returned no allocation candidates")
    return "\n".join(lines) + "\n"
