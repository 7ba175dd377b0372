"""bulk_load: whole trees and consumers written set-based into an empty database,
read back through the API as the API would have written them."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.direct import PlacementDirect
from placement_wsgi.objects.bulk_load import (
    CONSUMER_GENERATION,
    LoadedConsumer,
    LoadedProvider,
    LoadedTree,
    load_trees,
)

ROOT_A, CHILD_A = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
ROOT_B = "bbbbbbbb-0000-4000-8000-000000000001"
AGG = "cccccccc-0000-4000-8000-000000000001"
VM = "dddddddd-0000-4000-8000-000000000001"


def trees():
    return [
        LoadedTree([
            LoadedProvider(ROOT_A, "node-a", None, {"VCPU": {"total": 8}},
                           ["COMPUTE_NODE", "CUSTOM_RACK_1"], [AGG]),
            LoadedProvider(CHILD_A, "node-a_gpu", ROOT_A,
                           {"CUSTOM_GPU_X": {"total": 4, "max_unit": 2}}, [], [])],
            [LoadedConsumer(VM, "proj", "user", {ROOT_A: {"VCPU": 2},
                                                 CHILD_A: {"CUSTOM_GPU_X": 1}})]),
        LoadedTree([LoadedProvider(ROOT_B, "node-b", None,
                                   {"MEMORY_MB": {"total": 1024, "reserved": 512}}, [], [AGG])]),
    ]


def test_the_trees_read_back_as_the_api_shows_them(database, conf):
    recorded = []
    assert load_trees(database, trees(), batch_size=1,
                      record=lambda connection, roots: recorded.append(roots)) == 2
    assert [len(roots) for roots in recorded] == [1, 1]
    with PlacementDirect(conf) as placement:
        listed = placement.get("/resource_providers", microversion="1.14").json()
        assert [(p["name"], p["parent_provider_uuid"], p["root_provider_uuid"])
                for p in listed["resource_providers"]] == [
            ("node-a", None, ROOT_A), ("node-a_gpu", ROOT_A, ROOT_A), ("node-b", None, ROOT_B)]
        gpu = placement.get(f"/resource_providers/{CHILD_A}/inventories",
                            microversion="1.28").json()["inventories"]["CUSTOM_GPU_X"]
        assert gpu == {"total": 4, "reserved": 0, "min_unit": 1, "max_unit": 2,
                       "step_size": 1, "allocation_ratio": 1.0}
        assert sorted(placement.get(f"/resource_providers/{ROOT_A}/traits",
                                     microversion="1.6").json()[
            "traits"]) == ["COMPUTE_NODE", "CUSTOM_RACK_1"]
        members = placement.get(f"/resource_providers?member_of={AGG}",
                                microversion="1.19").json()["resource_providers"]
        assert sorted(p["uuid"] for p in members) == [ROOT_A, ROOT_B]
        held = placement.get(f"/allocations/{VM}", microversion="1.38").json()
        assert held["consumer_generation"] == CONSUMER_GENERATION
        assert (held["project_id"], held["user_id"], held["consumer_type"]) == (
            "proj", "user", "unknown")
        assert {rp: entry["resources"] for rp, entry in held["allocations"].items()} == {
            ROOT_A: {"VCPU": 2}, CHILD_A: {"CUSTOM_GPU_X": 1}}
        usages = placement.get(f"/resource_providers/{ROOT_B}/inventories",
                               microversion="1.28").json()["inventories"]["MEMORY_MB"]
        assert usages["reserved"] == 512
        # The id sequence continues after the explicit ids: the API creates the next one.
        created = placement.post("/resource_providers", json={"name": "later"},
                                 microversion="1.20")
        assert created.status_code == 200, created.text


def test_an_invalid_custom_name_writes_nothing(database):
    bad = [LoadedTree([LoadedProvider(ROOT_A, "node-a", None, {}, ["CUSTOM_lower"], [])])]
    with pytest.raises(errors.BadRequest):
        load_trees(database, bad)
    with database.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(
            tables.resource_providers)).scalar_one() == 0
