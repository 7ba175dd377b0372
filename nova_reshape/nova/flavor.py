"""Flavors and the extra specs nova_reshape reads from them.

One record serves every reader: the scheduler builds it from a scenario or
the command line (hence the defaults), novadb from nova's API database and
from the flavors an instance carries in ``instance_extra.flavor``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from nova_reshape.nova.errors import ObjectFormatError


class CpuPolicy(enum.StrEnum):
    """nova's ``CPUAllocationPolicy`` (hw:cpu_policy)."""

    SHARED = "shared"
    DEDICATED = "dedicated"
    MIXED = "mixed"


def policy_of(value: object, what: str) -> CpuPolicy | None:
    """``value`` as a CpuPolicy (None when unset); ObjectFormatError naming ``what``."""
    if value is None:
        return None
    try:
        return CpuPolicy(value)
    except ValueError as error:
        raise ObjectFormatError(f"{what}: unknown cpu_policy {value!r}") from error


@dataclass(frozen=True)
class Flavor:
    """The ``Flavor`` fields a placement decision depends on.

    ``flavorid`` is nova's public id (empty when the flavor was not read from
    nova); ``swap`` is in MB like nova's.
    """

    name: str | None = "flavor"
    vcpus: int = 1
    memory_mb: int = 512
    root_gb: int = 0
    ephemeral_gb: int = 0
    swap: int = 0
    extra_specs: Mapping[str, str] = field(default_factory=dict)
    flavorid: str = ""

    @property
    def cpu_policy(self) -> CpuPolicy | None:
        """``hw:cpu_policy``; ObjectFormatError for a value nova does not know."""
        return policy_of(self.extra_specs.get("hw:cpu_policy"), f"flavor {self.flavorid}")


@dataclass(frozen=True)
class FlavorInfo:
    """An instance's flavors: current, and old/new during a resize."""

    cur: Flavor
    old: Flavor | None = None
    new: Flavor | None = None
