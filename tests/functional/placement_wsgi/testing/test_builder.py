"""ProviderBuilder: fixture data through the API, generations as upstream's fixtures leave them."""

from __future__ import annotations

import pytest

from placement_wsgi.testing.builder import FixtureDataError, ProviderBuilder
from placement_wsgi.testing.fixtures import APIFixture
from tests.fixtures.gabbi import started


@pytest.fixture
def build(engine: str):
    with started(APIFixture, engine) as fixture:
        yield ProviderBuilder(fixture.client)


def test_generations_move_with_inventories_traits_and_allocations_only(build):
    root = build.provider("cn1", "11111111-1111-1111-1111-111111111111")
    assert build.generation(root) == 0  # aggregates set with the bare list: no bump
    child = build.provider("numa0", parent=root)
    build.inventory(child, "VCPU", 8)
    build.inventory(child, "CUSTOM_MAGIC", 4, reserved=1)
    build.traits(child, "HW_CPU_X86_AVX2", "CUSTOM_FAST")
    assert build.generation(child) == 3
    consumer = build.allocate(child, {"VCPU": 2}, "project", "user")
    assert build.generation(child) == 4
    client = build.client
    inventory = client.get(f"/resource_providers/{child}/inventories").json["inventories"]
    assert inventory["VCPU"]["max_unit"] == 8
    assert inventory["CUSTOM_MAGIC"]["reserved"] == 1
    assert client.get(f"/allocations/{consumer}").json["allocations"][child]["resources"] \
        == {"VCPU": 2}
    assert client.get(f"/resource_providers/{root}/aggregates").json["aggregates"] \
        == ["11111111-1111-1111-1111-111111111111"]


def test_a_refused_request_names_what_was_being_built(build):
    root = build.provider("cn1")
    with pytest.raises(FixtureDataError, match="create provider cn1: 409"):
        build.provider("cn1")
    with pytest.raises(FixtureDataError, match=f"allocate .* of {root}: 409"):
        build.allocate(root, {"VCPU": 1}, "project", "user")
