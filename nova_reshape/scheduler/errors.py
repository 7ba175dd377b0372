"""Exceptions of the filter scheduler.

Errors a scheduling run can end with fall in three stages, mirroring the
``error.stage`` field of the explain result: the scenario/configuration was
invalid (``ScenarioError``), a filter or weigher raised (any exception, kept
as-is so its class name can be reported like nova's would be), or no host
was left (``NoValidHost``, which is a result, not a crash).
"""

from __future__ import annotations


class SchedulerError(Exception):
    """Base class of the errors raised by this package."""


class ScenarioError(SchedulerError):
    """The scenario or configuration is invalid; nothing was scheduled."""


class ConfigError(ScenarioError):
    """A configuration option has a value nova's option type would reject."""


class PluginNotFound(ConfigError):
    """A filter or weigher name does not resolve to a loadable class."""


class ComputeHostMetricNotFound(SchedulerError):
    """MetricsWeigher: a configured metric is missing and metrics.required is set."""

    def __init__(self, host: str, node: str, name: str) -> None:
        super().__init__(
            f"Metric {name} not found on host {host}, node {node}")
        self.host = host
        self.node = node
        self.name = name


class OrphanedObjectError(SchedulerError):
    """nova's error for lazy-loading a field of an object that has no context.

    ImagePropertiesWeigher meets it on the stub Instance nova puts on the
    chosen host between the instances of a multi-create in a server group:
    the stub has no context, so reading its image metadata fails.
    """

    def __init__(self) -> None:
        super().__init__("Cannot call obj_load_attr on orphaned Instance object")


class NoValidHost(SchedulerError):
    """No host survived filtering for some instance of the request.

    ``filter_name`` is the first filter that returned no host (None when the
    pre-filter already emptied the list or no host was given), ``reasons``
    maps each host label to why it was dropped (by that filter or earlier).
    """

    def __init__(self, message: str, *, instance_index: int = 0,
                 filter_name: str | None = None,
                 reasons: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.instance_index = instance_index
        self.filter_name = filter_name
        self.reasons = dict(reasons or {})
