"""The filter scheduler: pre-filter, filter chain, weighing, selection, consumption.

``FilterScheduler.schedule`` runs nova's per-instance loop over a list of
HostStates and returns a full trace (``ScheduleResult``): which hosts entered
the chain, what each filter kept and why it dropped the others, every
weigher's raw/normalized value and multiplier per host, the subset and the
choice. ``select_destinations`` is the plain API on top (hosts, or
NoValidHost naming the filter that emptied the list).

Host order is nova's throughout: filters never reorder, sorting is stable
and descending, and instance k+1 starts from ``[chosen] + rest`` of
instance k's weighed list.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import NoValidHost
from nova_reshape.scheduler.filters import BaseHostFilter, load_filters
from nova_reshape.scheduler.host_state import HostState, InstanceInfo
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.weights import BaseHostWeigher, load_weighers, normalize


@dataclass
class FilterStep:
    """One filter reached in the chain: survivors and ``{label: reason}`` of the dropped."""

    name: str
    hosts: list[HostState]
    skipped: bool = False
    rejected: dict[str, str] = field(default_factory=dict)


@dataclass
class WeighingTrace:
    """Per-weigher columns (raw, normalized, multiplier), indexed like ``hosts``."""

    hosts: list[HostState]
    names: list[str] = field(default_factory=list)
    raw: list[list[Any]] = field(default_factory=list)
    normalized: list[list[float]] = field(default_factory=list)
    multipliers: list[list[float]] = field(default_factory=list)

    def scores(self, index: int) -> dict[str, dict[str, Any]]:
        return {name: {"raw": self.raw[w][index], "normalized": self.normalized[w][index],
                       "multiplier": self.multipliers[w][index]}
                for w, name in enumerate(self.names)}


@dataclass(slots=True)
class WeighedHost:
    host: HostState
    weight: float
    index: int
    trace: WeighingTrace | None = None

    def scores(self) -> dict[str, dict[str, Any]]:
        return self.trace.scores(self.index) if self.trace else {}


@dataclass
class InstanceTrace:
    index: int
    instance_uuid: str | None
    forced: bool = False
    candidates: list[HostState] | None = None
    prefilter_rejected: dict[str, str] = field(default_factory=dict)
    filters: list[FilterStep] = field(default_factory=list)
    passed: list[HostState] = field(default_factory=list)
    weighed: list[WeighedHost] = field(default_factory=list)
    subset: list[HostState] = field(default_factory=list)
    selected: HostState | None = None

    def emptied_by(self) -> str | None:
        """Name of the filter that left no host (None if hosts passed or none entered)."""
        if self.passed:
            return None
        ran = [step for step in self.filters if not step.skipped]
        return ran[-1].name if ran and not ran[-1].hosts else None

    def reasons(self) -> dict[str, str]:
        """``{label: "Stage: reason"}`` for every host dropped for this instance."""
        reasons = {label: f"pre-filter: {why}" for label, why in self.prefilter_rejected.items()}
        for step in self.filters:
            for label, why in step.rejected.items():
                reasons[label] = f"{step.name}: {why}"
        return reasons


@dataclass
class ScheduleResult:
    instances: list[InstanceTrace] = field(default_factory=list)
    selected: list[HostState] = field(default_factory=list)
    no_valid_host: bool = False
    error: dict[str, Any] | None = None
    #: The exception behind ``error`` (not part of the rendered result).
    exception: BaseException | None = field(default=None, repr=False)


class FilterScheduler:
    """Filters and weighs HostStates for a RequestSpec, nova-style.

    ``now`` pins the clock ComputeFilter compares heartbeats with.
    """

    def __init__(self, conf: SchedulerConfig | None = None, *,
                 filters: Sequence[BaseHostFilter] | None = None,
                 weighers: Sequence[BaseHostWeigher] | None = None,
                 now: float | None = None) -> None:
        self.conf = conf or SchedulerConfig()
        self.filters = list(filters) if filters is not None else load_filters(self.conf)
        self.weighers = list(weighers) if weighers is not None else load_weighers(self.conf)
        self.minmax = self.conf.filter_scheduler.weight_normalization == "minmax"
        self.current_weigher: str | None = None
        if now is not None:
            for host_filter in self.filters:
                if hasattr(type(host_filter), "now"):
                    host_filter.now = now

    # -- filtering --------------------------------------------------------

    def prefilter(self, hosts: Sequence[HostState], spec: RequestSpec,
                  trace: InstanceTrace) -> tuple[list[HostState], str]:
        """requested_destination, ignore_hosts, force_hosts/nodes.

        Returns the hosts and what happens next: ``"filter"`` (run the
        chain), ``"forced"`` (skip all filters) or ``"empty"`` (ignore_hosts
        removed everything: no filter runs).
        """
        dropped = trace.prefilter_rejected
        hosts = list(hosts)
        destination = spec.requested_destination
        if destination is not None and destination.host:
            keep = []
            for host in hosts:
                if host.host == destination.host and (
                        destination.node is None or host.nodename == destination.node):
                    keep.append(host)
                else:
                    dropped[host.label] = "not the requested destination"
            hosts = keep
        ignore = {name.lower() for name in spec.ignore_hosts or []}
        force_hosts = {name.lower() for name in spec.force_hosts or []}
        force_nodes = set(spec.force_nodes or [])
        if not (ignore or force_hosts or force_nodes):
            return hosts, "filter"
        if ignore:
            hosts = _split(hosts, lambda h: h.host.lower() not in ignore, dropped,
                           "in ignore_hosts")
            if not hosts:
                return [], "empty"
        if force_hosts:
            hosts = _split(hosts, lambda h: h.host.lower() in force_hosts, dropped,
                           "not in force_hosts")
        if force_nodes:
            hosts = _split(hosts, lambda h: h.nodename in force_nodes, dropped,
                           "not in force_nodes")
        if not spec.scheduler_hints.get("_nova_check_type") and (force_hosts or force_nodes):
            # nova returns the forced hosts unfiltered, or nothing: no filter runs.
            return hosts, "forced"
        return hosts, "filter"

    def run_filters(self, hosts: list[HostState], spec: RequestSpec, index: int,
                    trace: InstanceTrace) -> list[HostState]:
        """The filter chain; stops at the first filter that leaves no host."""
        rebuild = spec.is_rebuild
        for host_filter in self.filters:
            if index > 0 and host_filter.run_filter_once_per_request:
                trace.filters.append(FilterStep(host_filter.name, list(hosts), skipped=True))
                continue
            if rebuild and not host_filter.RUN_ON_REBUILD:
                trace.filters.append(FilterStep(host_filter.name, list(hosts)))
                continue
            step = FilterStep(host_filter.name, [])
            trace.filters.append(step)
            step.hosts, step.rejected = host_filter.filter_all(hosts, spec)
            hosts = step.hosts
            if not hosts:
                break
        return hosts

    def get_filtered_hosts(self, hosts: Sequence[HostState], spec: RequestSpec,
                           index: int = 0, trace: InstanceTrace | None = None
                           ) -> list[HostState]:
        """nova's HostManager.get_filtered_hosts, recording into ``trace``."""
        trace = trace or InstanceTrace(index, spec.instance_uuid)
        hosts, mode = self.prefilter(hosts, spec, trace)
        if mode == "forced":
            trace.forced = True
            trace.candidates = None
            trace.passed = list(hosts)
            return trace.passed
        if mode == "empty":
            trace.candidates = []
            trace.passed = []
            return []
        trace.candidates = list(hosts)
        trace.passed = self.run_filters(list(hosts), spec, index, trace)
        return trace.passed

    # -- weighing ---------------------------------------------------------

    def get_weighed_hosts(self, hosts: Sequence[HostState], spec: RequestSpec
                          ) -> list[WeighedHost]:
        """Weighed hosts sorted by descending weight (stable); unweighed if <= 1 host."""
        hosts = list(hosts)
        if len(hosts) <= 1:
            return [WeighedHost(host, 0.0, i) for i, host in enumerate(hosts)]
        trace = WeighingTrace(hosts)
        totals = [0.0] * len(hosts)
        in_aggregates = [i for i, host in enumerate(hosts) if host.aggregate_metadata]
        seen: dict[str, int] = {}
        for weigher in self.weighers:
            name = weigher.name
            self.current_weigher = name
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name}#{seen[name]}"
            if self.minmax:
                # Plain min-max: unclamped values, bounds from the data.
                raw = weigher.raw_weights(hosts, spec)
                norm = normalize(raw)
            else:
                raw = list(weigher.weigh_objects(hosts, spec))
                norm = normalize(raw, weigher.minval, weigher.maxval)
            multipliers = weigher.weight_multipliers(hosts, in_aggregates)
            # All-zero normalized values add nothing (unless a multiplier is inf/nan).
            if any(norm) or not all(math.isfinite(m) for m in set(multipliers)):
                totals = [total + multiplier * value for total, multiplier, value
                          in zip(totals, multipliers, norm, strict=True)]
            trace.names.append(name)
            trace.raw.append(raw)
            trace.normalized.append(norm)
            trace.multipliers.append(multipliers)
        order = sorted(range(len(hosts)), key=totals.__getitem__, reverse=True)
        return [WeighedHost(hosts[i], totals[i], i, trace) for i in order]

    # -- the per-instance loop ---------------------------------------------

    def schedule(self, hosts: Sequence[HostState], spec: RequestSpec,
                 instance_uuids: Sequence[str] | None = None, *,
                 subset_choices: Sequence[int] | None = None,
                 rng: random.Random | None = None) -> ScheduleResult:
        """Schedule ``spec.num_instances`` instances; never raises for filter errors.

        ``subset_choices[i]`` picks instance i's host inside the
        ``host_subset_size`` subset (``% len(subset)``) instead of a random
        choice; with explicit choices ``shuffle_best_same_weighed_hosts`` is
        not applied, so runs are reproducible.
        """
        result = ScheduleResult()
        uuids = list(instance_uuids or [None] * spec.num_instances)
        rng = rng or random.Random()
        current = list(hosts)
        for index, instance_uuid in enumerate(uuids):
            spec.instance_uuid = instance_uuid
            trace = InstanceTrace(index, instance_uuid)
            result.instances.append(trace)
            stage, name = "filter", None
            try:
                passed = self.get_filtered_hosts(current, spec, index, trace)
                stage = "weigh"
                self.current_weigher = None
                trace.weighed = self.get_weighed_hosts(passed, spec)
            except Exception as exc:  # reported like the failure nova would raise
                if stage == "filter":
                    name = trace.filters[-1].name if trace.filters else None
                else:
                    name = self.current_weigher
                result.error = {"stage": stage, stage if stage == "filter" else "weigher": name,
                                "type": type(exc).__name__, "message": str(exc),
                                "instance_index": index}
                result.exception = exc
                return result
            if not trace.weighed:
                result.no_valid_host = True
                return result
            choice = None
            if subset_choices is not None:
                choice = subset_choices[index] if index < len(subset_choices) else 0
            current = self.pick(trace, rng, choice)
            chosen = current[0]
            trace.selected = chosen
            result.selected.append(chosen)
            self.consume(chosen, spec, instance_uuid)
        return result

    def pick(self, trace: InstanceTrace, rng: random.Random,
             choice: int | None = None) -> list[HostState]:
        """The weighed hosts of ``trace`` with the chosen one first (nova's sorted hosts).

        Optionally shuffles the hosts tied for the best weight, takes the
        ``host_subset_size`` subset and picks one at random (or
        ``subset[choice % len]`` when ``choice`` is given, without
        shuffling); the rest keep weighed order. Records ``trace.subset``.
        """
        ordered = [w.host for w in trace.weighed]
        if choice is None and self.conf.filter_scheduler.shuffle_best_same_weighed_hosts:
            top = trace.weighed[0].weight
            best = [w.host for w in trace.weighed if w.weight == top]
            rng.shuffle(best)
            ordered = best + ordered[len(best):]
        trace.subset = ordered[:self.conf.filter_scheduler.host_subset_size]
        if choice is not None:
            chosen = trace.subset[choice % len(trace.subset)]
        else:
            chosen = rng.choice(trace.subset)
        return [chosen] + [host for host in ordered if host is not chosen]

    @staticmethod
    def consume(host: HostState, spec: RequestSpec, instance_uuid: str | None) -> None:
        """Account the chosen host for the next instance (nova's _consume_selected_host)."""
        host.consume_from_request(spec)
        group = spec.instance_group
        if group is not None:
            group.hosts.append(host.host)
            if instance_uuid and instance_uuid not in host.instances:
                host.instances[instance_uuid] = InstanceInfo(uuid=instance_uuid, stub=True)

    def select_destinations(self, hosts: Sequence[HostState], spec: RequestSpec,
                            instance_uuids: Sequence[str] | None = None, *,
                            rng: random.Random | None = None) -> list[HostState]:
        """One host per instance, or NoValidHost with the emptying filter and reasons."""
        result = self.schedule(hosts, spec, instance_uuids, rng=rng)
        if result.exception is not None:
            raise result.exception
        if result.no_valid_host:
            trace = result.instances[-1]
            raise NoValidHost("There are not enough hosts available.",
                              instance_index=trace.index, filter_name=trace.emptied_by(),
                              reasons=trace.reasons())
        return result.selected


def _split(hosts: list[HostState], keep: Any, dropped: dict[str, str],
           reason: str) -> list[HostState]:
    """Hosts for which ``keep(host)`` holds; the others are recorded in ``dropped``."""
    kept = []
    for host in hosts:
        if keep(host):
            kept.append(host)
        else:
            dropped[host.label] = reason
    return kept
