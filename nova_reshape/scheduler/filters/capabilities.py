"""Flavor extra specs against host capabilities and aggregate metadata."""

from __future__ import annotations

import json
from typing import Any

from nova_reshape.scheduler.extra_specs_ops import compile_requirement
from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.host_state import HOST_STATE_FIELDS, HostState
from nova_reshape.scheduler.request_spec import RequestSpec

_MISSING = object()


def lookup_capability(host_state: HostState, path: list[str]) -> Any:
    """Walk ``path`` from the HostState as nova's ComputeCapabilitiesFilter does.

    Strings are JSON-parsed before each step (invalid JSON -> None), dicts
    use ``.get``, other objects ``getattr`` falling back to ``.stats`` when
    the attribute is missing or None. Any None ends the walk with None.
    """
    cap: Any = host_state
    for index, part in enumerate(path):
        if isinstance(cap, str):
            if cap is host_state.cpu_info and index > 0:
                try:
                    cap = host_state.cpu_info_dict()
                except ValueError:
                    return None
            else:
                try:
                    cap = json.loads(cap)
                except ValueError:
                    return None
        if isinstance(cap, dict):
            cap = cap.get(part)
        elif cap is host_state:
            value = getattr(cap, part) if part in HOST_STATE_FIELDS else None
            cap = value if value is not None else host_state.stats.get(part)
        else:
            value = getattr(cap, part, None)
            if value is None:
                stats = getattr(cap, "stats", _MISSING)
                if stats is _MISSING or not hasattr(stats, "get"):
                    return None
                value = stats.get(part)
            cap = value
        if cap is None:
            return None
    return cap


def compile_lookup(path: list[str]):
    """A fast equivalent of ``lookup_capability(host, path)`` for common paths."""
    first = path[0]
    if len(path) == 1:
        if first in HOST_STATE_FIELDS:
            def field_or_stat(host_state):
                value = getattr(host_state, first)
                return value if value is not None else host_state.stats.get(first)
            return field_or_stat
        return lambda host_state: host_state.stats.get(first)
    if first == "cpu_info":
        rest = path[1:]

        def cpu_info(host_state):
            if host_state.cpu_info is None:
                return lookup_capability(host_state, path)
            try:
                cap = host_state.cpu_info_dict()
            except ValueError:
                return None
            for part in rest:
                if isinstance(cap, str):
                    try:
                        cap = json.loads(cap)
                    except ValueError:
                        return None
                if not isinstance(cap, dict):
                    return lookup_capability(host_state, path)
                cap = cap.get(part)
                if cap is None:
                    return None
            return cap
        return cpu_info
    return lambda host_state: lookup_capability(host_state, path)


class ComputeCapabilitiesFilter(PreparedHostFilter):
    """Matches ``capabilities:``-scoped (and bare) flavor extra specs against the host.

    Keys are split on every ``:``; only the ``capabilities`` scope is
    checked. A bare key is checked only if the host has an attribute or stat
    of that name. ``hw:maxphysaddr_bits: N`` is checked as
    ``capabilities:cpu_info:maxphysaddr:bits: >= N``.
    """

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        checks = []
        for key, requirement in spec_obj.flavor.extra_specs.items():
            if key == "hw:maxphysaddr_bits":
                key, requirement = "capabilities:cpu_info:maxphysaddr:bits", f">= {requirement}"
            scope = key.split(":")
            if len(scope) > 1:
                if scope[0] != "capabilities":
                    continue
                scope = scope[1:]
                bare = False
            else:
                bare = True
            checks.append((key, scope, bare, requirement, compile_requirement(str(requirement)),
                           compile_lookup(scope)))
        if not checks:
            return None
        reject = self.reject

        def check(host_state):
            for key, scope, bare, requirement, matcher, lookup in checks:
                if bare and key not in HOST_STATE_FIELDS and key not in host_state.stats:
                    continue
                cap = lookup(host_state)
                if cap is None:
                    return reject("extra spec %s: host has no capability %s",
                                  key, ":".join(scope))
                if not matcher(str(cap)):
                    return reject("extra spec %s=%r does not match host value %r",
                                  key, requirement, str(cap))
            return True
        return check


class AggregateInstanceExtraSpecsFilter(PreparedHostFilter):
    """Matches bare and ``aggregate_instance_extra_specs:`` extra specs against aggregates.

    The metadata of all the host's aggregates is pooled per key (values
    split on ``,`` and stripped); a spec passes if any value matches, and a
    key that no aggregate of the host has fails the host.
    """

    run_filter_once_per_request = True
    SCOPE = "aggregate_instance_extra_specs"

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        checks = []
        for key, requirement in spec_obj.flavor.extra_specs.items():
            scope = key.split(":", 1)
            if len(scope) > 1:
                if scope[0] != self.SCOPE:
                    continue
                name = scope[1]
            else:
                name = scope[0]
            checks.append((key, name, requirement, compile_requirement(str(requirement))))
        if not checks:
            return None
        reject = self.reject

        def check(host_state):
            for key, name, requirement, matcher in checks:
                values = host_state.aggregate_values_split(name) if \
                    host_state.aggregate_values(name) else None
                if not values:
                    return reject("extra spec %s: no aggregate of the host has metadata %s",
                                  key, name)
                if not any(matcher(value) for value in sorted(values)):
                    return reject("extra spec %s=%r matches none of the aggregate values %s",
                                  key, requirement, ", ".join(sorted(values)))
            return True
        return check
