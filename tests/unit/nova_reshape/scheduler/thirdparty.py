"""Third-party plug-ins written only against nova's methods, loaded by dotted path in tests."""

from __future__ import annotations

from nova_reshape.scheduler.filters import BaseHostFilter
from nova_reshape.scheduler.weights import BaseHostWeigher


class OddNameFilter(BaseHostFilter):
    """Keeps hosts whose name ends in an odd digit; plain False, no reason."""

    def host_passes(self, host_state, spec_obj):
        return int(host_state.host[-1]) % 2 == 1


class RackFilter(BaseHostFilter):
    """Keeps hosts of rack r1, explaining the others."""

    run_filter_once_per_request = True

    def host_passes(self, host_state, spec_obj):
        rack = host_state.stats.get("rack")
        if rack == "r1":
            return True
        return self.reject("host is in rack %s", rack)


class NameLengthWeigher(BaseHostWeigher):
    """Longer host names win (a toy weigher with a fixed multiplier)."""

    def _weigh_object(self, host_state, spec_obj):
        return len(host_state.host)


def my_filters():
    return [OddNameFilter, RackFilter]
