#!/usr/bin/env python3
"""Benchmark of the offline migration: N compute nodes x G GPUs x M instances.

Generates a flat deployment (tools/generate_deployment.py; by default GPUs
only, as in the target scenario: 1,000 nodes x 4 GPUs x 16 instances), by
default with the generator's bulk inserts (``generate_bulk``: the rows the
Placement API would write, 500 hosts per transaction, a few ms per node;
``--seed-through-api`` builds it request by request instead, ~40 ms per
node on PostgreSQL; not part of the measured migration either way), then
runs the migrate_compute_inventory flow through PlacementDirect on the
database and reports wall time, CPU seconds (in total and per node),
Placement calls per node and peak memory (maximum resident set size of
the process and of its largest worker). Targets (issue 16): 10,000 nodes in
at most 5 minutes on PostgreSQL and MariaDB, at most 30 CPU-ms per node,
the cost per node flat from 1,000 to 10,000 nodes. Not a test.

    python tools/bench_migrate.py                      # fresh SQLite file
    python tools/bench_migrate.py --nodes 200 --kinds numa,pci,accelerators
    python tools/bench_migrate.py --engine postgresql --nodes 5000
    python tools/bench_migrate.py --engine mysql --nodes 10000
    python tools/bench_migrate.py --database postgresql+psycopg://postgres@127.0.0.1/bench
    python tools/bench_migrate.py --engine mysql --nodes 10000 --generate-only

``--engine postgresql|mysql`` creates a throwaway database on the local
server (``--server`` to name another; 127.0.0.1 by default) and drops it at
the end; ``--database`` names an existing empty one instead (the schema is
created). ``--transport intercept`` uses PlacementDirect's
requests/wsgi-intercept client instead of calling its app directly (slower;
same application). ``--bulk-read`` also times the set-based read of every
node's tree and allocations (``nova_reshape.compute.tree_source``) before
the migration; ``--profile FILE`` (one process) writes a cProfile of the
migration and adds its split into layers to the report.
``--generate-only`` stops after building the deployment and reports
``generate_seconds`` (docs/performance.md, "Building the benchmark
deployment"). A progress bar shows on a terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import json
import os
import pstats
import resource
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_transport  # noqa: E402
import generate_deployment  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_reshape.cmd import manage  # noqa: E402
from nova_reshape.compute import migrate, parallel  # noqa: E402
from nova_reshape.compute.tree_source import node_states  # noqa: E402
from nova_reshape.progress import Progress, progress_callback  # noqa: E402
from nova_reshape.transport import open_direct  # noqa: E402
from nova_reshape.virt.host import Host, load_hosts  # noqa: E402
from placement_wsgi.db import tables  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size so far of this process, or of its largest child (KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


#: Local servers ``--engine`` creates a throwaway database on.
SERVERS = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432",
           "mysql": "mysql+pymysql://root@127.0.0.1:3306"}


@contextlib.contextmanager
def throwaway_database(server: str) -> Iterator[str]:
    """URL of a new empty database on ``server`` (no database part), dropped afterwards."""
    name = f"bench_migrate_{uuid.uuid4().hex[:12]}"
    admin_db = "/postgres" if server.startswith("postgresql") else "/"
    engine = sa.create_engine(server + admin_db, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield f"{server}/{name}"
    finally:
        with engine.connect() as connection:
            if server.startswith("postgresql"):
                connection.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
            connection.exec_driver_sql(f"DROP DATABASE {name}")
        engine.dispose()


def bulk_read(database: str) -> dict[str, float]:
    """Seconds to read every tree and its consumers' allocations in batches."""
    start, cpu = time.monotonic(), time.process_time()
    with open_direct(generate_deployment.direct_conf(database, sync=False)) as placement:
        trees = sum(1 for _ in node_states(placement))
    wall = time.monotonic() - start
    return {"bulk_read_trees": trees, "bulk_read_seconds": round(wall, 2),
            "bulk_read_cpu_ms_per_tree": round(
                1000 * (time.process_time() - cpu) / max(trees, 1), 2)}


def analyze(database: str) -> None:
    """Gather the planner's statistics, as a deployment's database has them
    (PostgreSQL's autovacuum; this machine's server runs with it off).

    Without them PostgreSQL estimates from table sizes alone and plans a
    one-tree read as a hash join over the whole allocations table: 17 ms per
    tree at 600 trees, growing with the table, where the same read with
    statistics uses the indexes (3 ms). MariaDB recalculates InnoDB's
    statistics in the background once a tenth of a table changed, but right
    after the bulk insert of 1,000 nodes the migration took 60-70 s instead
    of 18 s. SQLite plans by its indexes.
    """
    if database.startswith("sqlite"):
        return
    engine = sa.create_engine(database, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            if database.startswith("postgresql"):
                connection.exec_driver_sql("ANALYZE")
            else:
                names = ", ".join(table.name for table in tables.ALL_TABLES_CHILD_FIRST)
                connection.exec_driver_sql(f"ANALYZE TABLE {names}").all()
    finally:
        engine.dispose()


def seed(database: str, hosts_dir: str, nodes: int, gpus: int, instances: int,
         kinds: tuple[str, ...], through_api: bool) -> generate_deployment.Summary:
    """Write the flat deployment: set-based inserts, or ``through_api`` request by
    request; then :func:`analyze` it."""
    progress = progress_callback(sys.stderr)
    if through_api:
        with PlacementDirect(generate_deployment.direct_conf(database)) as placement:
            summary = generate_deployment.generate(placement, hosts_dir, hosts=nodes, gpus=gpus,
                                                   instances=instances, kinds=kinds,
                                                   progress=progress)
    else:
        opened = generate_deployment.open_database(database)
        try:
            summary = generate_deployment.generate_bulk(opened, hosts_dir, hosts=nodes,
                                                        gpus=gpus, instances=instances,
                                                        kinds=kinds, progress=progress)
        finally:
            opened.dispose()
    analyze(database)
    return summary


def cpu_seconds_since(before: os.times_result) -> float:
    """CPU seconds (user and system, this process and its waited-for children) since ``before``."""
    return sum(after - then for after, then in zip(os.times()[:4], before[:4], strict=True))


def migrate_hosts(database: str, directory: str, hosts: list[Host], transport: str, workers: int,
                  profiler: cProfile.Profile | None,
                  progress: Progress) -> tuple[list[migrate.NodeResult], int]:
    """Migrate ``hosts`` (in worker processes when ``workers`` > 1): results and call count.

    The profiler, if given, runs around the single-process migration only.
    """
    if workers > 1:
        config = os.path.join(directory, "placement.conf")
        generate_deployment.write_config(config, database)
        run = parallel.ParallelMigration(
            functools.partial(manage.open_database, [config]), hosts, workers,
            progress=progress)
        return run.run(), run.calls
    conf = generate_deployment.direct_conf(database, sync=False)
    opener = open_direct(conf) if transport == "wsgi" else PlacementDirect(conf)
    with opener as placement:
        single = migrate.Migration(placement, hosts, progress=progress)
        if profiler is not None:
            profiler.enable()
        results = single.run()
        if profiler is not None:
            profiler.disable()
    return results, single.calls


def bench(database: str, directory: str, nodes: int, gpus: int, instances: int,
          kinds: tuple[str, ...], transport: str, workers: int, with_bulk_read: bool = False,
          profile: str | None = None, seed_through_api: bool = False,
          generate_only: bool = False) -> dict[str, object]:
    hosts_dir = os.path.join(directory, "hosts")
    start, cpu_start = time.monotonic(), time.process_time()
    summary = seed(database, hosts_dir, nodes, gpus, instances, kinds, seed_through_api)
    generated = time.monotonic() - start
    generation = {
        "database": database.split("://")[0], "nodes": nodes, "gpus": gpus,
        "instances_per_node": instances, "kinds": list(kinds) or ["gpus only"],
        "seeded_through": "api" if seed_through_api else "bulk inserts",
        "instances": summary.instances, "generate_seconds": round(generated, 1),
        "generate_ms_per_node": round(1000 * generated / nodes, 2),
        "generate_cpu_seconds": round(time.process_time() - cpu_start, 1)}
    if generate_only:
        return {**generation, "peak_rss_mb": round(peak_rss_mb(), 1)}
    rss_before = peak_rss_mb()
    extra: dict[str, object] = bulk_read(database) if with_bulk_read else {}

    start = time.monotonic()
    hosts = load_hosts([hosts_dir])
    loaded = time.monotonic() - start
    phase_ends: dict[str, float] = {}

    def progress(phase: str, done: int, total: int) -> None:
        phase_ends[phase] = time.monotonic()

    cpu_before = os.times()
    start = time.monotonic()
    profiler = cProfile.Profile() if profile and workers <= 1 else None
    results, calls = migrate_hosts(database, directory, hosts, transport, workers, profiler,
                                   progress)
    migrated = time.monotonic() - start
    if profile and profiler is not None:
        profiler.dump_stats(profile)
        extra["layers"] = bench_transport.layers(pstats.Stats(profiler), migrated)
    cpu = cpu_seconds_since(cpu_before)
    counts = migrate.summarize(results)
    return {
        **generation, "transport": transport, "workers": workers,
        "load_host_files_seconds": round(loaded, 2),
        "migrate_seconds": round(migrated, 1),
        "migrate_plus_load_seconds": round(migrated + loaded, 1),
        "check_phase_seconds": round(phase_ends.get("check", start) - start, 1),
        "write_phase_seconds": round(
            phase_ends.get("migrate", start) - phase_ends.get("check", start), 1),
        "migrate_cpu_seconds_of_this_process_and_workers": round(cpu, 1),
        "cpu_ms_per_node": round(1000 * cpu / nodes, 1),
        "nodes_per_second": round(nodes / migrated, 1),
        "placement_calls": calls, "placement_calls_per_node": round(calls / nodes, 1),
        "peak_rss_mb_after_generate": round(rss_before, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "peak_rss_mb_worker": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
        "outcome": counts,
        "wall_seconds_at_this_rate_for_10000_nodes": round(
            (migrated + loaded) * 10000 / nodes, 0),
        **extra,
    }


def deployment_arguments(parser: argparse.ArgumentParser) -> None:
    """The generated deployment's size: --nodes, --gpus, --instances, --kinds."""
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--kinds", default="",
                        help="devices besides GPUs (numa,pci,accelerators); default none")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    deployment_arguments(parser)
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mysql"), default="sqlite",
                        help="sqlite: a new file; postgresql/mysql (MariaDB): a throwaway "
                        "database on --server")
    parser.add_argument("--server", help="server URL without database for --engine "
                        "(default: the local PostgreSQL or MariaDB on 127.0.0.1)")
    parser.add_argument("--database", help="an existing empty database URL instead of --engine")
    parser.add_argument("--bulk-read", action="store_true",
                        help="also time the bulk read of every tree before migrating")
    parser.add_argument("--profile", metavar="FILE",
                        help="cProfile the migration into FILE (one worker only) and split it "
                        "into layers")
    parser.add_argument("--transport", choices=("wsgi", "intercept"), default="wsgi",
                        help="single-process runs only")
    parser.add_argument("--workers", type=int,
                        help="worker processes (default: what the command picks, "
                        "parallel.auto_workers)")
    parser.add_argument("--seed-through-api", action="store_true",
                        help="build the deployment through the Placement API, request by "
                        "request, instead of with bulk inserts (slow; the same rows)")
    parser.add_argument("--generate-only", action="store_true",
                        help="only build the deployment and report how long it took")
    args = parser.parse_args(argv)
    kinds = tuple(kind for kind in args.kinds.split(",") if kind)
    workers = args.workers or parallel.auto_workers(args.nodes)
    if args.profile and workers > 1:
        parser.error("--profile needs --workers 1")
    with contextlib.ExitStack() as stack:
        directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-migrate-"))
        if args.database:
            database = args.database
        elif args.engine == "sqlite":
            database = f"sqlite:///{os.path.join(directory, 'bench.sqlite')}"
        else:
            database = stack.enter_context(
                throwaway_database(args.server or SERVERS[args.engine]))
        report = bench(database, directory, args.nodes, args.gpus, args.instances, kinds,
                       args.transport, workers, args.bulk_read, args.profile,
                       args.seed_through_api, args.generate_only)
    print(json.dumps(report, indent=2))
    if args.generate_only:
        return 0
    return 0 if report["outcome"] == {"migrated": args.nodes} else 1


if __name__ == "__main__":
    sys.exit(main())
