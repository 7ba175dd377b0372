"""Several API writes in one transaction (PlacementDirect.write_requests), every engine.

Each write leaves the rows its request leaves (the same writes made with
the requests on a twin provider give the same generations), and an error
anywhere rolls every write of the transaction back.
"""

from __future__ import annotations

import uuid as uuid_module

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects.allocation import ConsumerAllocations
from tests.fixtures.config import make_conf


def _ok(response):
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


def _provider(client, name):
    uuid = str(uuid_module.uuid4())
    _ok(client.post("/resource_providers", json={"uuid": uuid, "name": name},
                    microversion="1.20"))
    _ok(client.put(f"/resource_providers/{uuid}/inventories", json={
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}))
    return uuid


def _generation(client, uuid):
    return _ok(client.get(f"/resource_providers/{uuid}", microversion="1.14"))["generation"]


def test_adding_aggregates_moves_generations_as_one_put_per_aggregate(db_url):
    direct = PlacementDirect(make_conf(db_url))
    with direct as client:
        by_puts, at_once = _provider(client, "by-puts"), _provider(client, "at-once")
        first, second = str(uuid_module.uuid4()), str(uuid_module.uuid4())
        for aggregates in ([first], [first, second]):
            _ok(client.put(f"/resource_providers/{by_puts}/aggregates", microversion="1.19",
                           json={"aggregates": aggregates, "resource_provider_generation":
                                 _generation(client, by_puts)}))
        got = direct.write_requests(lambda writes: writes.add_aggregates(
            {at_once: [first, second, first], "d0d0d0d0-0000-4000-8000-000000000000": [first]}))
        assert got == {at_once: [first, second]}  # the unknown provider left out
        assert _generation(client, at_once) == _generation(client, by_puts)
        assert direct.write_requests(lambda writes: writes.add_aggregates(
            {at_once: [second]})) == {at_once: []}  # nothing to add: no bump
        assert _generation(client, at_once) == _generation(client, by_puts)


def test_an_error_rolls_every_write_of_the_transaction_back(db_url):
    direct = PlacementDirect(make_conf(db_url))
    with direct as client:
        provider = _provider(client, "cmp")
        consumer, aggregate = str(uuid_module.uuid4()), str(uuid_module.uuid4())

        def writes_then_fails(writes):
            writes.add_aggregates({provider: [aggregate]})
            writes.put_allocations([ConsumerAllocations(consumer, "p", "u", {
                provider: {"VCPU": 2}}, consumer_generation=None)])
            assert writes.allocations_of(consumer)["allocations"][provider]["resources"] == {
                "VCPU": 2}
            writes.put_allocations([ConsumerAllocations(str(uuid_module.uuid4()), "p", "u", {
                provider: {"VCPU": 99}}, consumer_generation=None)])

        with pytest.raises(errors.Conflict):
            direct.write_requests(writes_then_fails)
        assert _ok(client.get(f"/allocations/{consumer}"))["allocations"] == {}
        assert _ok(client.get(f"/resource_providers/{provider}/aggregates",
                              microversion="1.19"))["aggregates"] == []
        assert _generation(client, provider) == 1  # the inventory's PUT only
        with pytest.raises(errors.NotFound):
            direct.write_requests(lambda writes: writes.delete_allocations(consumer))


def test_unused_aggregates_can_be_deleted_used_ones_stay(db_url, database):
    direct = PlacementDirect(make_conf(db_url))
    with direct as client:
        provider = _provider(client, "cmp")
        used, unused = str(uuid_module.uuid4()), str(uuid_module.uuid4())
        direct.write_requests(lambda writes: writes.add_aggregates({provider: [used, unused]}))
        _ok(client.put(f"/resource_providers/{provider}/aggregates", microversion="1.19",
                       json={"aggregates": [used],
                             "resource_provider_generation": _generation(client, provider)}))
    assert database.write(aggregate_obj.delete_unused, [used, unused]) == [unused]
    assert database.read(lambda connection: sorted(connection.execute(
        sa.select(tables.placement_aggregates.c.uuid)).scalars())) == [used]
