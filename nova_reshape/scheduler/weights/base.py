"""The host weigher plug-in interfaces and nova's normalization.

A weigher gives one raw value per host; the handler (pipeline.py) asks for
them all at once (``weigh_objects``: clamped to the weigher's
``minval``/``maxval``; ``raw_weights``: unclamped, for ``minmax``
normalization), normalizes them to 0..1 with ``normalize`` and multiplies
each by the host's multiplier (``weight_multipliers``: the configured
value, overridden per host by aggregate metadata). A weigher never writes
final weights itself. Each form has one method to write:

* ``BaseHostWeigher`` is nova's contract, for third parties:
  ``_weigh_object(host_state, weight_properties)``, called once per host
  (nova's ``weight_multiplier(host_state)`` may be overridden too).
* ``BatchHostWeigher`` is the built-ins' form: ``raw_weights(hosts,
  spec_obj)``, one list for all hosts, so a request is read once, not once
  per host.
* ``HostAttributeWeigher`` is a batch weigher whose raw value is one
  HostState attribute, named in ``attribute``.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from nova_reshape.scheduler.config import Configured

if TYPE_CHECKING:
    from nova_reshape.scheduler.host_state import HostState
    from nova_reshape.scheduler.request_spec import RequestSpec


def normalize(values: Sequence[float], minval: float | None = None,
              maxval: float | None = None) -> list[float]:
    """Scale ``values`` to 0..1 between ``minval`` and ``maxval``.

    A missing bound is taken from the data; when both bounds are equal every
    value becomes 0 (nova's rule, so equal values never win anything).
    """
    if not values:
        return []
    high = float(max(values) if maxval is None else maxval)
    low = float(min(values) if minval is None else minval)
    if low == high:
        return [0.0] * len(values)
    span = high - low
    return [(value - low) / span for value in values]


class BaseHostWeigher(Configured):
    """Base class of every host weigher; third parties implement ``_weigh_object``.

    ``minval``/``maxval`` fix a normalization bound instead of taking it from
    the data (RAM/CPU/Disk/IoOps use ``minval = 0``), and raw values are
    clamped to them. ``multiplier_option`` names the ``[filter_scheduler]``
    option (and aggregate metadata key) of the multiplier; without it the
    multiplier is 1.0, as in nova.
    """

    minval: float | None = None
    maxval: float | None = None
    multiplier_option: str | None = None
    multiplier_sign = 1

    def _weigh_object(self, host_state: HostState, weight_properties: RequestSpec) -> Any:
        """The raw value of one host: the one method a weigher writes (nova's)."""
        raise NotImplementedError(f"{self.name} must implement _weigh_object")

    def raw_weights(self, hosts: Sequence[HostState], spec_obj: RequestSpec) -> list[Any]:
        """Unclamped raw values, one per host."""
        weigh = self._weigh_object
        return [weigh(host_state, spec_obj) for host_state in hosts]

    def weigh_objects(self, hosts: Sequence[HostState], spec_obj: RequestSpec) -> list[Any]:
        """Raw values clamped to ``minval``/``maxval`` (nova's weigh_objects)."""
        weights = self.raw_weights(hosts, spec_obj)
        if not weights:
            return weights
        if self.minval is not None and min(weights) < self.minval:
            low = self.minval
            weights = [value if value >= low else low for value in weights]
        if self.maxval is not None and max(weights) > self.maxval:
            high = self.maxval
            weights = [value if value <= high else high for value in weights]
        return weights

    def config_multiplier(self) -> float:
        """The configured multiplier (before per-aggregate overrides)."""
        if self.multiplier_option is None:
            return 1.0
        return getattr(self.conf.filter_scheduler, self.multiplier_option)

    def weight_multiplier(self, host_state: HostState) -> float:
        """The host's multiplier: minimum aggregate override, else the config value."""
        default = self.config_multiplier()
        if self.multiplier_option is None:
            return self.multiplier_sign * default
        return self.multiplier_sign * host_state.aggregate_number(self.multiplier_option,
                                                                  default)

    def weight_multipliers(self, hosts: Sequence[HostState],
                           in_aggregates: Sequence[int] | None = None) -> list[float]:
        """``weight_multiplier`` of every host, indexed like ``hosts``.

        ``in_aggregates`` optionally lists the indices of the hosts that have
        aggregate metadata; only the batch form uses it.
        """
        multiplier = self.weight_multiplier
        return [multiplier(host_state) for host_state in hosts]


class BatchHostWeigher(BaseHostWeigher):
    """Base class of the built-in weighers; they implement ``raw_weights``.

    Their multiplier is stated by ``multiplier_option``/``multiplier_sign``
    (and ``config_multiplier``), never by overriding ``weight_multiplier``:
    so a host without aggregate metadata has the configured multiplier, and
    ``weight_multipliers`` looks up only the hosts that have some.
    """

    def raw_weights(self, hosts: Sequence[HostState], spec_obj: RequestSpec) -> list[Any]:
        """Unclamped raw values, one per host: the one method a batch weigher writes."""
        raise NotImplementedError(f"{self.name} must implement raw_weights")

    def _weigh_object(self, host_state: HostState, weight_properties: RequestSpec) -> Any:
        """nova's entry point, for one host: the batch of one."""
        return self.raw_weights([host_state], weight_properties)[0]

    def weight_multipliers(self, hosts: Sequence[HostState],
                           in_aggregates: Sequence[int] | None = None) -> list[float]:
        """The configured multiplier, looked up per host only for ``in_aggregates``."""
        multipliers = [self.multiplier_sign * self.config_multiplier()] * len(hosts)
        if self.multiplier_option is None:
            return multipliers
        multiplier = self.weight_multiplier
        for index in range(len(hosts)) if in_aggregates is None else in_aggregates:
            multipliers[index] = multiplier(hosts[index])
        return multipliers


class HostAttributeWeigher(BatchHostWeigher):
    """A batch weigher whose raw value is the HostState attribute ``attribute``."""

    attribute: str

    def raw_weights(self, hosts: Sequence[HostState], spec_obj: RequestSpec) -> list[Any]:
        value = attrgetter(self.attribute)
        return [value(host_state) for host_state in hosts]
