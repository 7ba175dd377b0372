#!/usr/bin/env python
"""Benchmark the live explain (``explain --placement-database``) at scale.

Seeds N compute nodes straight into a fresh database (VCPU, MEMORY_MB,
DISK_GB; one in ten disabled, one in five with an FPGA child owned by
Cyborg, RAM from 64 to 128 GB), then asks for a 96 GB flavor so that about
half the roots are not candidates, and times:

* the reasons pass alone: one read transaction that loads the engine's
  snapshot for every provider and explains every root that is not a
  candidate (what the ``<= 2 s at 10,000 providers`` target is about);
* the whole explain: request filters, the candidates query, the reasons,
  HostStates for the candidates and nova's default filters plus every
  weigher;
* with ``--nova-database``, the whole explain again with the HostStates
  read from a nova cell database (SQLite file) holding the same compute
  nodes, their services (one in twenty forced down) and two instances each.

    python tools/bench_explain_live.py [--hosts 1000 10000] [--repeat 5]
        [--db-url postgresql+psycopg://postgres@127.0.0.1:5432/bench]
        [--nova-database]

``--db-url`` must name an existing, empty database (used for the first
size only); by default a temporary SQLite file per size is used.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.explain import run
from nova_reshape.scheduler.live.nova_hosts import NovaDatabaseHostStates
from nova_reshape.scheduler.live.placement import from_database
from nova_reshape.scheduler.live.reasons import explain_roots
from nova_reshape.scheduler.live.request import LiveRequest, build_spec, placement_requests
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.candidates.resolved import resolve
from placement_wsgi.db import migration
from placement_wsgi.db.database import Database
from placement_wsgi.microversion import Version
from tests.fixtures import nova_db
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

LIVE = LiveRequest(vcpus=4, ram_mb=96 * 1024, disk_gb=40, flavor_name="m1.huge")


def hosts(count: int) -> list[Provider]:
    result = []
    for i in range(count):
        children = [Provider(f"cn{i:05d}-fpga", inventories={"FPGA": 1},
                             traits=["OWNER_CYBORG"])] if i % 5 == 0 else []
        result.append(compute_node(
            f"cn{i:05d}", vcpu=32, memory_mb=65536 + (i * 7919) % 65536, disk_gb=1000,
            cpu_ratio=4.0, children=children,
            traits=["COMPUTE_STATUS_DISABLED"] if i % 10 == 9 else []))
    return result


def nova_cell(url: str, providers: list[Provider]) -> None:
    """A cell database with a compute node, a service and two instances per provider."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    small = nova_db.flavor_info(nova_db.flavor("m1.small", 2, 2048))
    services, nodes, instances, extra = [], [], [], []
    for i, provider in enumerate(providers, start=1):
        name = provider.name
        services.append({"id": i, "host": name, "binary": "nova-compute", "topic": "compute",
                         "disabled": i % 10 == 0, "forced_down": i % 20 == 7, "deleted": 0,
                         "version": 66, "created_at": now, "last_seen_up": now})
        memory = provider.inventories["MEMORY_MB"]
        nodes.append(nova_db.compute_row(
            i, name, name, provider.uuid, vcpus=32, memory_mb=memory, vcpus_used=4,
            memory_mb_used=4096, free_ram_mb=memory - 4096, local_gb=1000,
            stats=json.dumps({"num_instances": "2", "io_workload": str(i % 4)})))
        for k in (0, 1):
            uuid = f"{i:08x}-0000-4000-8000-{k:012x}"
            instances.append({"id": 2 * i + k, "uuid": uuid, "host": name, "node": name,
                              "vcpus": 2, "memory_mb": 2048, "root_gb": 10,
                              "ephemeral_gb": 0, "vm_state": "active", "project_id": "p",
                              "user_id": "u", "deleted": 0, "created_at": now})
            extra.append({"id": 2 * i + k, "instance_uuid": uuid, "flavor": small,
                          "deleted": 0, "created_at": now})
    nova_db.populate(url, {nova_db.services: services, nova_db.compute_nodes: nodes,
                           nova_db.instances: instances, nova_db.instance_extra: extra})


def reasons_only(db_url: str) -> tuple[float, collections.Counter]:
    conf = SchedulerConfig()
    (request,), _ = placement_requests(build_spec(LIVE, conf), conf, [])
    pairs = request.query_params()
    database = Database(db_url)

    def body(connection):
        resolved = resolve(connection, parse_query(pairs, Version(1, 36)))
        return explain_roots(connection, resolved, set(), limited=False)

    try:
        start = time.perf_counter()
        verdicts, _ = database.read(body)
        elapsed = time.perf_counter() - start
    finally:
        database.dispose()
    return elapsed, collections.Counter(v.reason.value for v in verdicts)


def measure(db_url: str, count: int, repeat: int,
            cell_url: str | None = None) -> dict[str, list[float]]:
    database = Database(db_url)
    migration.upgrade(database)
    database.dispose()
    start = time.perf_counter()
    providers = hosts(count)
    seed(db_url, providers)
    if cell_url:
        nova_cell(cell_url, providers)
    print(f"{count} hosts: seeded in {time.perf_counter() - start:.2f} s")
    times: dict[str, list[float]] = {"reasons pass": [], "whole explain": []}
    if cell_url:
        times["with nova DB"] = []
    conf = SchedulerConfig({"filter_scheduler": {"weight_classes": ["all"]}})
    for _ in range(repeat):
        elapsed, reasons = reasons_only(db_url)
        times["reasons pass"].append(elapsed)
        start = time.perf_counter()
        result = run(LIVE, lambda query: from_database(db_url, query), conf)
        times["whole explain"].append(time.perf_counter() - start)
        if cell_url:
            start = time.perf_counter()
            with_nova = run(LIVE, lambda query: from_database(db_url, query), conf,
                            NovaDatabaseHostStates(cell_url))
            times["with nova DB"].append(time.perf_counter() - start)
    if cell_url:
        trace = with_nova.schedule.instances[0]
        print(f"  with nova DB: {len(trace.candidates)} hosts, {len(trace.reasons())} "
              f"dropped by filters, selected {[h.host for h in with_nova.schedule.selected]}")
    print(f"  roots explained (as if none were candidates): {dict(reasons)}")
    print(f"  whole explain: {len(result.view.candidate_roots)} candidate roots, "
          f"{len(result.view.verdicts)} explained, selected "
          f"{[h.host for h in result.schedule.selected]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db-url")
    parser.add_argument("--nova-database", action="store_true",
                        help="also time the explain with HostStates from a nova cell DB")
    args = parser.parse_args()
    for index, count in enumerate(args.hosts):
        with tempfile.TemporaryDirectory(prefix="bench-explain-") as directory:
            db_url = args.db_url if args.db_url and index == 0 else \
                f"sqlite:///{directory}/placement.sqlite"
            cell_url = f"sqlite:///{directory}/nova.sqlite" if args.nova_database else None
            times = measure(db_url, count, args.repeat, cell_url)
        for name, values in times.items():
            print(f"  {name:>14}: best {min(values) * 1000:7.1f} ms, "
                  f"median {statistics.median(values) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
