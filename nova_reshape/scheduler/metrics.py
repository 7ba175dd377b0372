"""Compute-node monitor metrics as HostState.metrics holds them.

nova stores every metric value as an integer. Percent metrics arrive as
fractions and are multiplied by 100 and truncated when loaded, so 0.29
becomes 28 (0.29 * 100 == 28.999999999999996). Only nova's 12
``MonitorMetricType`` names exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nova_reshape.scheduler.errors import ScenarioError

PERCENT_METRICS = frozenset({
    "cpu.user.percent", "cpu.kernel.percent", "cpu.idle.percent",
    "cpu.iowait.percent", "cpu.percent",
})
METRIC_NAMES = PERCENT_METRICS | frozenset({
    "cpu.frequency", "cpu.user.time", "cpu.kernel.time", "cpu.idle.time",
    "cpu.iowait.time", "numa.membw.max", "numa.membw.current",
})


def load_metrics(raw: Any) -> dict[str, int]:
    """``{"cpu.percent": 0.35}`` or ``[{"name": .., "value": ..}]`` -> stored ints."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = []
        for entry in raw:
            if not isinstance(entry, Mapping) or "name" not in entry or "value" not in entry:
                raise ScenarioError(f"invalid metric entry {entry!r}: needs name and value")
            items.append((entry["name"], entry["value"]))
    else:
        raise ScenarioError("metrics must be an object or a list of {name, value}")
    metrics: dict[str, int] = {}
    for name, value in items:
        if name not in METRIC_NAMES:
            raise ScenarioError(
                f"unknown metric {name!r}; valid names: {', '.join(sorted(METRIC_NAMES))}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(f"metric {name} value must be a number, got {value!r}")
        metrics[name] = int(value * 100) if name in PERCENT_METRICS else int(value)
    return metrics
