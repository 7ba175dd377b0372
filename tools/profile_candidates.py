#!/usr/bin/env python
"""Time (and optionally profile) GET /allocation_candidates in-process.

Builds the bench's "nested" deployment (the 7-provider tree described in
``../shared/bench/README.md`` beside a checkout, ``--trees`` copies) or its
"flat" one
(``--flat``: one provider per tree, aggregates and traits as placeload) with
bulk inserts into a fresh SQLite file, then calls the WSGI app (the whole
middleware pipeline, microversion ``latest``) ``--runs`` times and prints
the median and best wall time. ``--profile`` adds a cProfile of one extra
call, sorted by cumulative time.

    python tools/profile_candidates.py [--flat] [--trees 1000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pathlib
import pstats
import statistics
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa
import webob

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from placement_wsgi import deploy  # noqa: E402
from placement_wsgi.db import tables  # noqa: E402
from tests.fixtures.config import make_conf  # noqa: E402

NESTED_QUERY = (
    "resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH"
    "&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO"
    "&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA")
FLAT_QUERY = "resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of={agg}&required=HW_CPU_X86_AVX2"

#: name, parent, {class: inventory fields}, traits
NESTED_TREE = [
    ("cn1", None, {"DISK_GB": {"total": 20480}}, ["COMPUTE_VOLUME_MULTI_ATTACH"]),
    ("numa0", "cn1", {"VCPU": {"total": 4, "reserved": 2},
                      "MEMORY_MB": {"total": 2048, "min_unit": 512, "step_size": 256}}, []),
    ("numa1", "cn1", {"VCPU": {"total": 4},
                      "MEMORY_MB": {"total": 2048, "min_unit": 256, "max_unit": 1024}},
     ["CUSTOM_FOO"]),
    ("fpga0", "numa0", {"FPGA": {"total": 1}}, []),
    ("pgpu0", "numa0", {"VGPU": {"total": 8}}, []),
    ("fpga1_0", "numa1", {"FPGA": {"total": 1}}, []),
    ("fpga1_1", "numa1", {"FPGA": {"total": 1}}, []),
]
FLAT_INVENTORY = {"VCPU": {"total": 32, "max_unit": 16},
                  "MEMORY_MB": {"total": 8192, "min_unit": 128},
                  "DISK_GB": {"total": 8192, "min_unit": 5}}


def _inventory(provider: int, rc: int, fields: dict) -> dict:
    return {"resource_provider_id": provider, "resource_class_id": rc, "reserved": 0,
            "min_unit": 1, "max_unit": fields["total"], "step_size": 1,
            "allocation_ratio": 1.0, **fields}


def seed(app, trees: int, flat: bool) -> str:
    """Insert the deployment; returns the query string to ask."""
    database = app.placement_app.database

    def body(connection: sa.Connection) -> str:
        classes = dict(connection.execute(
            sa.select(tables.resource_classes.c.name, tables.resource_classes.c.id)).all())
        connection.execute(tables.traits.insert(), [{"name": "CUSTOM_FOO"}])
        trait_ids = dict(connection.execute(
            sa.select(tables.traits.c.name, tables.traits.c.id)).all())
        providers, inventories, traits, members = [], [], [], []
        aggregates = [str(uuid.uuid4()) for _ in range(3)]
        connection.execute(tables.placement_aggregates.insert(),
                           [{"id": index + 1, "uuid": agg} for index, agg in enumerate(aggregates)])
        next_id = 1
        for tree in range(trees):
            if flat:
                providers.append({"id": next_id, "uuid": str(uuid.uuid4()),
                                  "name": f"rp{tree}", "generation": 1,
                                  "root_provider_id": next_id, "parent_provider_id": None})
                inventories += [_inventory(next_id, classes[rc], fields)
                                for rc, fields in FLAT_INVENTORY.items()]
                names = ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD"]
                traits += [{"resource_provider_id": next_id, "trait_id": trait_ids[name]}
                           for name in names[:tree % 3 + 1]]
                members += [{"resource_provider_id": next_id, "aggregate_id": agg + 1}
                            for agg in range(tree % 3 + 1)]
                next_id += 1
                continue
            ids: dict[str, int] = {}
            for name, parent, inventory, provider_traits in NESTED_TREE:
                ids[name] = next_id
                providers.append({"id": next_id, "uuid": str(uuid.uuid4()),
                                  "name": f"{name}-{tree}", "generation": 1,
                                  "root_provider_id": ids["cn1"],
                                  "parent_provider_id": ids.get(parent) if parent else None})
                inventories += [_inventory(next_id, classes[rc], fields)
                                for rc, fields in inventory.items()]
                traits += [{"resource_provider_id": next_id, "trait_id": trait_ids[name]}
                           for name in provider_traits]
                next_id += 1
        connection.execute(tables.resource_providers.insert(), providers)
        connection.execute(tables.inventories.insert(), inventories)
        connection.execute(tables.resource_provider_traits.insert(), traits)
        if members:
            connection.execute(tables.resource_provider_aggregates.insert(), members)
        return FLAT_QUERY.format(agg=aggregates[0]) if flat else NESTED_QUERY

    return database.write(body)


def call(app, query: str) -> webob.Response:
    request = webob.Request.blank(
        "/allocation_candidates?" + query,
        headers={"x-auth-token": "admin", "openstack-api-version": "placement latest",
                 "accept": "application/json"})
    return request.get_response(app)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--flat", action="store_true")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--limit", type=int, help="add &limit=N to the query")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{directory}/profile.sqlite"
        app = deploy.loadapp(make_conf(url, placement_database={"sync_on_startup": True}))
        query = seed(app, args.trees, args.flat)
        if args.limit:
            query += f"&limit={args.limit}"
        response = call(app, query)
        body = json.loads(response.body)
        print(f"status {response.status_int}, {len(body['allocation_requests'])} requests, "
              f"{len(body['provider_summaries'])} summaries, {len(response.body)} bytes")
        for _ in range(3):
            call(app, query)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            call(app, query)
            times.append(time.perf_counter() - start)
        print(f"median {statistics.median(times) * 1000:.1f} ms, "
              f"best {min(times) * 1000:.1f} ms over {args.runs} runs")
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            call(app, query)
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
        app.placement_app.database.dispose()


if __name__ == "__main__":
    main()
