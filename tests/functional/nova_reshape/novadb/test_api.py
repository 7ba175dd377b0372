"""nova's API database: flavors and host aggregates, read without writing."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.novadb import api
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from tests.fixtures import nova_api_db
from tests.fixtures.databases import enabled_engines
from tests.fixtures.nova_db import checksums


@pytest.fixture(scope="module", params=enabled_engines())
def api_url(request):
    with nova_api_db.nova_api(request.param) as url:
        yield url


def test_flavor_by_name_with_extra_specs(api_url):
    flavor = api.read_flavor(api_url, "p1.dedicated")
    assert (flavor.flavorid, flavor.vcpus, flavor.memory_mb, flavor.root_gb,
            flavor.ephemeral_gb, flavor.swap) == ("dedicated-1", 4, 8192, 10, 5, 1024)
    assert flavor.extra_specs == {"hw:cpu_policy": "dedicated",
                                  "trait:CUSTOM_FAST": "required"}


def test_flavor_by_id_and_unknown(api_url):
    flavor = api.read_flavor(api_url, "2")
    assert flavor.name == "m1.small" and flavor.extra_specs == {}
    with pytest.raises(api.FlavorNotFound, match="no flavor named 'm9.huge'"):
        api.read_flavor(api_url, "m9.huge")


def test_aggregates_with_hosts_and_metadata(api_url):
    got = {a.name: a for a in api.read_aggregates(api_url)}
    assert list(got) == ["az1", "fast", "empty"]
    assert got["az1"].hosts == {"cmp-a", "cmp-b"} and got["az1"].uuid == nova_api_db.AZ1_UUID
    assert got["az1"].metadata == {"availability_zone": "az1"}
    assert got["fast"].metadata == {"trait:CUSTOM_FAST": "required"}
    assert got["empty"].hosts == frozenset() and got["empty"].metadata == {}


def test_reads_change_nothing(api_url):
    before = checksums(api_url, nova_api_db.metadata)
    api.read_aggregates(api_url)
    api.read_flavor(api_url, "m1.small")
    assert checksums(api_url, nova_api_db.metadata) == before


def test_not_an_api_database(tmp_path):
    with pytest.raises(DatabaseReadError, match="nova API database"):
        api.read_aggregates(f"sqlite:///{tmp_path}/none.db")


def test_every_flavor_and_the_public_ones(api_url):
    engine = sa.create_engine(api_url)
    private = {"id": 9, "name": "private.one", "flavorid": "p9", "vcpus": 2, "memory_mb": 64,
               "swap": 0, "is_public": False}
    try:
        with engine.begin() as connection:
            connection.execute(nova_api_db.flavors.insert(), [private])
        with read_only(api_url, api.WHAT) as connection:
            every = api.flavors_on(connection)
            public = api.flavors_on(connection, public_only=True)
    finally:
        with engine.begin() as connection:
            connection.execute(nova_api_db.flavors.delete().where(
                nova_api_db.flavors.c.id == 9))
        engine.dispose()
    assert [(f.name, f.flavorid, f.vcpus) for f in every] == [
        ("m1.small", "2", 1), ("p1.dedicated", "dedicated-1", 4), ("private.one", "p9", 2)]
    assert every[1] == api.read_flavor(api_url, "p1.dedicated")
    assert public == every[:2]
