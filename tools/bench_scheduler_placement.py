#!/usr/bin/env python
"""Benchmark one scheduling request end to end through Placement (PlacementDirect).

Seeds N compute nodes (VCPU, MEMORY_MB, DISK_GB; one in ten disabled, one
in five with an FPGA child like Cyborg writes it) straight into a fresh
database, then times ``SchedulerManager.select_destinations`` for one
instance with nova's default filters and every weigher: the
``GET /allocation_candidates`` query (limit 1000), HostStates from the
summaries, filtering and weighing, the ``PUT /allocations`` claim and the
alternates. Each run claims for a new instance, so hosts slowly fill up as
they would in real life. The candidates query alone is timed too, to show
what the scheduler adds on top of Placement.

    python tools/bench_scheduler_placement.py [--hosts 1000] [--repeat 7]
        [--db-url postgresql+psycopg://postgres@127.0.0.1:5432/bench]

``--db-url`` must name an existing, empty database (its schema is created);
by default a temporary SQLite file is used.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from nova_reshape.nova.flavor import Flavor
from nova_reshape.report import SchedulerReportClient
from nova_reshape.scheduler import resource_request
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.manager import SchedulerManager
from nova_reshape.scheduler.request_spec import RequestSpec
from placement_wsgi.db import migration
from placement_wsgi.db.database import Database
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed


def hosts(count: int) -> list[Provider]:
    result = []
    for i in range(count):
        children = [Provider(f"cn{i:05d}-fpga", inventories={"FPGA": 1},
                             traits=["OWNER_CYBORG", "CUSTOM_FPGA_INTEL"])] if i % 5 == 0 else []
        result.append(compute_node(
            f"cn{i:05d}", vcpu=32, memory_mb=65536 + (i * 7919) % 65536, disk_gb=1000,
            cpu_ratio=4.0, children=children,
            traits=["COMPUTE_STATUS_DISABLED"] if i % 10 == 9 else []))
    return result


def spec() -> RequestSpec:
    return RequestSpec(flavor=Flavor(name="m1.medium", vcpus=2, memory_mb=4096, root_gb=20),
                       project_id="bench", user_id="bench")


def measure(db_url: str, count: int, repeat: int) -> dict[str, list[float]]:
    database = Database(db_url)
    migration.upgrade(database)
    database.dispose()
    start = time.perf_counter()
    seed(db_url, hosts(count))
    print(f"seeded {count} hosts in {time.perf_counter() - start:.2f} s")
    times: dict[str, list[float]] = {"candidates query": [], "select_destinations": []}
    with PlacementDirect(make_conf(db_url)) as client:
        report = SchedulerReportClient(client, retry_backoff=0)
        manager = SchedulerManager(report, SchedulerConfig({"filter_scheduler": {
            "weight_classes": ["all"]}}))
        manager.select_destinations(None, spec(), [str(uuid.uuid4())])  # warm caches
        for _ in range(repeat):
            request_spec = spec()
            request_spec.root_forbidden.add("COMPUTE_STATUS_DISABLED")
            query = resource_request.from_request_spec(request_spec)
            start = time.perf_counter()
            requests, _, _ = report.get_allocation_candidates(None, query)
            times["candidates query"].append(time.perf_counter() - start)
            start = time.perf_counter()
            (group,) = manager.select_destinations(None, spec(), [str(uuid.uuid4())])
            times["select_destinations"].append(time.perf_counter() - start)
        print(f"candidates per request: {len(requests)}; "
              f"hosts considered: {len(manager.last_traces[0].candidates or [])}; "
              f"selected {group[0].nodename} + {len(group) - 1} alternates")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--db-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scheduler-") as directory:
        db_url = args.db_url or f"sqlite:///{directory}/placement.sqlite"
        times = measure(db_url, args.hosts, args.repeat)
    for name, values in times.items():
        print(f"{name:>20}: best {min(values) * 1000:7.1f} ms, "
              f"median {statistics.median(values) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
