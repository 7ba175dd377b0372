"""The data sets of upstream's gabbi fixtures, built through the API."""

from __future__ import annotations

import os

import pytest

from placement_wsgi.testing import fixtures
from placement_wsgi.testing.builder import FixtureDataError
from placement_wsgi.testing.client import WSGIClient
from placement_wsgi.testing.datasets import AllocationFixture, DataFixture, SharedStorageFixture
from tests.fixtures.gabbi import started


class BrokenFixture(DataFixture):
    def make_data(self) -> None:
        self.set_environ("BROKEN_MADE", "yes")
        self.build.inventory("00000000-0000-0000-0000-000000000000", "VCPU", 1)


def test_a_fixture_failing_midway_cleans_up() -> None:
    with pytest.raises(FixtureDataError, match="show provider"):
        BrokenFixture().start_fixture()
    assert "BROKEN_MADE" not in os.environ
    with pytest.raises(RuntimeError):
        WSGIClient(fixtures.setup_app()).get("/resource_providers")


def test_shared_storage_builds_two_computes_and_two_sharing_storages(engine: str) -> None:
    with started(SharedStorageFixture, engine) as fixture:
        client = fixture.client
        names = {rp["name"]: rp for rp in client.get("/resource_providers").json[
            "resource_providers"]}
        assert len(names) == 12
        assert names["pf1_2"]["parent_provider_uuid"] == os.environ["NUMA1_2_UUID"]
        assert names["ss"]["uuid"] == os.environ["SS_UUID"]
        sharing = client.get("/resource_providers?required=MISC_SHARES_VIA_AGGREGATE").json
        assert {rp["name"] for rp in sharing["resource_providers"]} == {"ss", "ss2"}
        for name in ("cn1", "cn2", "ss", "ss2"):
            aggregates = client.get(f"/resource_providers/{names[name]['uuid']}/aggregates")
            assert aggregates.json["aggregates"] == [os.environ["AGG_UUID"]]
    assert "SS_UUID" not in os.environ


def test_allocation_fixture_leaves_three_consumers_on_rp_uuid(engine: str) -> None:
    with started(AllocationFixture, engine) as fixture:
        usages = fixture.client.get(f"/resource_providers/{os.environ['RP_UUID']}/usages")
        assert usages.json["usages"] == {"DISK_GB": 1020, "VCPU": 7}
        alt = fixture.client.get(f"/allocations/{os.environ['ALT_CONSUMER_ID']}").json
        assert alt["user_id"] == os.environ["ALT_USER_ID"]
