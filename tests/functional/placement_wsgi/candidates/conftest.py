"""Fixed deployments shared by the candidate engine tests."""

from __future__ import annotations

import pytest

from tests.functional.placement_wsgi.candidates.world import World


@pytest.fixture
def two_computes(database) -> World:
    """cn1 (in AGG1) with numa children; cn2 (in AGG2); a sharing disk in both."""
    world = World(database)
    world.provider("cn1", inventory={"MEMORY_MB": 1024}, aggregates=("AGG1",),
                   traits=("CUSTOM_ROOT",))
    world.provider("numa0", "cn1", inventory={"VCPU": 2}, traits=("CUSTOM_FAST",))
    world.provider("numa1", "cn1", inventory={"VCPU": {"total": 4, "max_unit": 2}},
                   used={"VCPU": 1})
    world.provider("cn2", inventory={"VCPU": 8, "MEMORY_MB": 2048}, aggregates=("AGG2",))
    world.provider("disk", inventory={"DISK_GB": 100},
                   traits=("MISC_SHARES_VIA_AGGREGATE",), aggregates=("AGG1", "AGG2"))
    return world
