"""The host weigher plug-in interface and nova's normalization.

A weigher returns one raw value per host (``_weigh_object``, or
``weigh_objects`` for all hosts at once). The handler (pipeline.py) clamps
them to the weigher's ``minval``/``maxval``, normalizes them to 0..1 with
``normalize`` and multiplies each by ``weight_multiplier(host_state)``,
which may differ per host (aggregate metadata overrides). A weigher never
writes final weights itself.
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
    """Base class of every host weigher (built-in and third-party).

    ``minval``/``maxval`` fix a normalization bound instead of taking it from
    the data (RAM/CPU/Disk/IoOps use ``minval = 0``), and raw values are
    clamped to them. ``multiplier_option`` names the ``[filter_scheduler]``
    option (and aggregate metadata key) of the multiplier.
    """

    minval: float | None = None
    maxval: float | None = None
    multiplier_option: str | None = None
    multiplier_sign = 1

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
        """``weight_multiplier`` for every host (one config lookup for all).

        ``in_aggregates`` optionally lists the indices of the hosts that have
        aggregate metadata; the others get the config value without a lookup.
        """
        if type(self).weight_multiplier is not BaseHostWeigher.weight_multiplier:
            return [self.weight_multiplier(host) for host in hosts]
        sign = self.multiplier_sign
        default = self.config_multiplier()
        multipliers = [sign * default] * len(hosts)
        option = self.multiplier_option
        if option is None:
            return multipliers
        if in_aggregates is None:
            in_aggregates = range(len(hosts))
        for index in in_aggregates:
            host = hosts[index]
            if option in host.aggregate_metadata:
                multipliers[index] = sign * host.aggregate_number(option, default)
        return multipliers

    #: A weigher whose raw value is one HostState attribute names it here
    #: instead of writing ``_weigh_object``.
    attribute: str | None = None

    def _weigh_object(self, host_state: HostState, spec_obj: RequestSpec) -> Any:
        """The raw value of one host (nova's plug-in method).

        A weigher states its formula once: as ``attribute``, as this method,
        or as ``raw_weights`` when the value depends on the whole request
        (this method then asks it for the one host).
        """
        if self.attribute is not None:
            return getattr(host_state, self.attribute)
        if type(self).raw_weights is not BaseHostWeigher.raw_weights:
            return self.raw_weights([host_state], spec_obj)[0]
        raise NotImplementedError(f"{self.name} must implement _weigh_object")

    def raw_weights(self, hosts: Sequence[HostState], spec_obj: RequestSpec) -> list[Any]:
        """Unclamped raw values, one per host."""
        if self.attribute is not None and \
                type(self)._weigh_object is BaseHostWeigher._weigh_object:
            value = attrgetter(self.attribute)
            return [value(host_state) for host_state in hosts]
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
