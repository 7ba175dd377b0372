"""read_provider_allocations: what GET .../allocations lists, for many providers at once."""

from __future__ import annotations

import uuid

import pytest

from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import provider_allocations


def ok(response):
    assert response.status_code < 400, (response.status_code, response.text)
    return response.json() if response.content else None


@pytest.fixture
def seeded(conf):
    """Three providers (the last empty), three consumers, one spread over two; the
    open PlacementDirect, the providers and what the API lists on each."""
    direct = PlacementDirect(conf)
    with direct as client:
        providers = [str(uuid.uuid4()) for _ in range(3)]
        for number, rp in enumerate(providers):
            ok(client.post("/resource_providers", json={"uuid": rp, "name": f"rp{number}"}))
            ok(client.put(f"/resource_providers/{rp}/inventories", json={
                "resource_provider_generation": 0,
                "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}}}))
        held = {str(uuid.uuid4()): {providers[0]: {"VCPU": 1, "MEMORY_MB": 256}},
                str(uuid.uuid4()): {providers[0]: {"VCPU": 2}, providers[1]: {"MEMORY_MB": 8}},
                str(uuid.uuid4()): {providers[1]: {"VCPU": 3}}}
        for consumer, allocations in held.items():
            ok(client.put(f"/allocations/{consumer}", microversion="1.28", json={
                "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
                "project_id": "p", "user_id": "u", "consumer_generation": None}))
        api = {rp: {consumer: entry["resources"] for consumer, entry in ok(client.get(
            f"/resource_providers/{rp}/allocations"))["allocations"].items()}
            for rp in providers}
        yield direct, providers, api


@pytest.mark.parametrize("batch_size", [1, 2, 2000])
def test_the_api_listing_for_each_provider_in_the_order_asked(seeded, batch_size):
    direct, providers, api = seeded
    asked = [providers[2], providers[0], "d0d0d0d0-0000-4000-8000-000000000000", providers[1]]
    read = list(direct.read_provider_allocations(asked, batch_size))
    assert [uuid_ for uuid_, _ in read] == asked
    assert dict(read) == {**api, asked[2]: {}}
    assert api[providers[2]] == {} and len(api[providers[0]]) == 2


def test_a_batch_holds_at_least_one_provider(seeded):
    direct, providers, _ = seeded
    with pytest.raises(ValueError):
        list(provider_allocations.read_provider_allocations(
            direct.app.placement_app.database, providers, batch_size=0))


def test_only_while_open(conf):
    with pytest.raises(RuntimeError):
        PlacementDirect(conf).read_provider_allocations([])
