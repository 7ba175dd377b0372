#!/usr/bin/env python3
"""Benchmark of the offline migration: N compute nodes x G GPUs x M instances.

Generates a flat deployment (tools/generate_deployment.py; by default GPUs
only, as in the target scenario: 1,000 nodes x 4 GPUs x 16 instances), then
runs the migrate_compute_inventory flow through PlacementDirect on the
database and reports wall time, Placement calls per node and peak memory
(maximum resident set size of the process). Target: under 2 minutes for the
default scenario on SQLite and PostgreSQL. Not a test.

    python tools/bench_migrate.py                      # fresh SQLite file
    python tools/bench_migrate.py --nodes 200 --kinds numa,pci,accelerators
    python tools/bench_migrate.py --database postgresql+psycopg://postgres@127.0.0.1/bench

A server database must exist and be empty (the schema is created).
``--transport intercept`` uses PlacementDirect's requests/wsgi-intercept
client instead of calling its app directly (slower; same application).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import generate_deployment  # noqa: E402

from nova_reshape.cmd import manage  # noqa: E402
from nova_reshape.compute import migrate, parallel, wsgi_transport  # noqa: E402
from nova_reshape.virt.host import load_hosts  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size so far of this process, or of its largest child (KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


def bench(database: str, directory: str, nodes: int, gpus: int, instances: int,
          kinds: tuple[str, ...], transport: str, workers: int) -> dict[str, object]:
    hosts_dir = os.path.join(directory, "hosts")
    start = time.monotonic()
    with PlacementDirect(generate_deployment.direct_conf(database)) as placement:
        summary = generate_deployment.generate(placement, hosts_dir, hosts=nodes, gpus=gpus,
                                               instances=instances, kinds=kinds)
    generated = time.monotonic() - start
    rss_before = peak_rss_mb()

    start = time.monotonic()
    hosts = load_hosts([hosts_dir])
    loaded = time.monotonic() - start
    phase_ends: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        phase_ends[phase] = time.monotonic()

    cpu_before = os.times()
    start = time.monotonic()
    if workers > 1:
        config = os.path.join(directory, "placement.conf")
        generate_deployment.write_config(config, database)
        run = parallel.ParallelMigration(
            functools.partial(manage.open_database, [config]), hosts, workers,
            progress=progress)
        results = run.run()
    else:
        conf = generate_deployment.direct_conf(database, sync=False)
        opener = (wsgi_transport.open_direct(conf) if transport == "wsgi"
                  else PlacementDirect(conf))
        with opener as placement:
            run = migrate.Migration(placement, hosts, progress=progress)
            results = run.run()
    migrated = time.monotonic() - start
    cpu_after = os.times()
    cpu = sum(after - before for after, before in zip(cpu_after[:4], cpu_before[:4],
                                                       strict=True))
    counts = migrate.summarize(results)
    calls = run.calls
    return {
        "database": database.split("://")[0], "nodes": nodes, "gpus": gpus,
        "instances_per_node": instances, "kinds": list(kinds) or ["gpus only"],
        "transport": transport, "workers": workers, "instances": summary.instances,
        "generate_seconds": round(generated, 1), "load_host_files_seconds": round(loaded, 2),
        "migrate_seconds": round(migrated, 1),
        "migrate_plus_load_seconds": round(migrated + loaded, 1),
        "check_phase_seconds": round(phase_ends.get("check", start) - start, 1),
        "write_phase_seconds": round(
            phase_ends.get("migrate", start) - phase_ends.get("check", start), 1),
        "migrate_cpu_seconds_of_this_process_and_workers": round(cpu, 1),
        "nodes_per_second": round(nodes / migrated, 1),
        "placement_calls": calls, "placement_calls_per_node": round(calls / nodes, 1),
        "peak_rss_mb_after_generate": round(rss_before, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "peak_rss_mb_worker": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
        "outcome": counts,
        "target_met": migrated + loaded < 120 and counts == {"migrated": nodes},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--kinds", default="",
                        help="devices besides GPUs (numa,pci,accelerators); default none")
    parser.add_argument("--database", help="empty database URL (default: a new SQLite file)")
    parser.add_argument("--transport", choices=("wsgi", "intercept"), default="wsgi",
                        help="single-process runs only")
    parser.add_argument("--workers", type=int,
                        help="worker processes (default: what the command picks, "
                        "parallel.auto_workers)")
    args = parser.parse_args(argv)
    kinds = tuple(kind for kind in args.kinds.split(",") if kind)
    with tempfile.TemporaryDirectory(prefix="bench-migrate-") as directory:
        database = args.database or f"sqlite:///{os.path.join(directory, 'bench.sqlite')}"
        workers = args.workers or parallel.auto_workers(args.nodes)
        report = bench(database, directory, args.nodes, args.gpus, args.instances, kinds,
                       args.transport, workers)
    print(json.dumps(report, indent=2))
    return 0 if report["outcome"] == {"migrated": args.nodes} else 1


if __name__ == "__main__":
    sys.exit(main())
