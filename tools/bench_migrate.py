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
Placement calls per node and peak memory (each process's own high-water
mark, ``VmHWM``, read by tools/process_peaks.py: this process's and each
worker's, never a worker's parent's memory at spawn). Targets (issue 16): 10,000 nodes in
at most 5 minutes on PostgreSQL and MariaDB, at most 30 CPU-ms per node,
the cost per node flat from 1,000 to 10,000 nodes. Not a test.

    python tools/bench_migrate.py                      # fresh SQLite file
    python tools/bench_migrate.py --nodes 200 --kinds numa,pci,accelerators
    python tools/bench_migrate.py --engine postgresql --nodes 5000
    python tools/bench_migrate.py --engine mysql --nodes 10000
    python tools/bench_migrate.py --database postgresql+psycopg://postgres@127.0.0.1/bench
    python tools/bench_migrate.py --engine mysql --nodes 10000 --generate-only
    python tools/bench_migrate.py --engine postgresql --nodes 1000 --over-http

``--engine postgresql|mysql`` creates a throwaway database on the local
server (``--server`` to name another; 127.0.0.1 by default) and drops it at
the end; ``--database`` names an existing empty one instead (the schema is
created). ``--transport intercept`` uses PlacementDirect's
requests/wsgi-intercept client instead of calling its app directly (slower;
same application). ``--bulk-read`` also times the set-based read of every
node's tree and allocations (``nova_reshape.compute.tree_source``) before
the migration; ``--profile FILE`` (one process) writes a cProfile of the
migration and adds its split into layers to the report.
``--over-http`` migrates through a gunicorn service on the database
(``--http-workers`` processes) over ``--placement-url``'s transport instead,
counts the requests in gunicorn's access log (``served_requests``, which
must equal the run's own ``placement_calls``), then migrates the same
deployment, built again on a fresh database, in-process, and reports both
and ``http_to_in_process_wall``.
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
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import bench_transport  # noqa: E402
import generate_deployment  # noqa: E402
import process_peaks  # noqa: E402
import requests  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from nova_reshape.cmd import manage  # noqa: E402
from nova_reshape.compute import migrate, parallel  # noqa: E402
from nova_reshape.compute.tree_source import node_states  # noqa: E402
from nova_reshape.progress import Progress, progress_callback  # noqa: E402
from nova_reshape.transport import open_direct  # noqa: E402
from nova_reshape.virt.host import Host, check_readable, iter_hosts  # noqa: E402
from placement_wsgi import gc_pause  # noqa: E402
from placement_wsgi.cmd import signals  # noqa: E402
from placement_wsgi.db import tables  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402
from placement_wsgi.testing.databases import created_database  # noqa: E402


def peak_rss_mb() -> float:
    """This process's own peak resident set size so far, in MB (its ``VmHWM``)."""
    return process_peaks.high_water_kb(os.getpid()) / 1024


#: Local servers ``--engine`` creates a throwaway database on.
SERVERS = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432",
           "mysql": "mysql+pymysql://root@127.0.0.1:3306"}


@contextlib.contextmanager
def throwaway_database(server: str) -> Iterator[str]:
    """URL of a new empty database on ``server`` (no database part), dropped afterwards."""
    with created_database(server, "bench_migrate_") as url:
        yield url


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


@contextlib.contextmanager
def gunicorn(database: str, directory: str, workers: int) -> Iterator[tuple[str, str, int]]:
    """The Placement service on ``database`` under gunicorn (noauth2): its URL, access
    log's path and pid; stopped (SIGTERM to the process it started) afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    access_log = os.path.join(directory, "access.log")
    environment = dict(os.environ, OS_PLACEMENT_DATABASE__CONNECTION=database,
                       OS_API__AUTH_STRATEGY="noauth2")
    with open(os.path.join(directory, "gunicorn.err"), "wb") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--preload",
             "--bind", f"127.0.0.1:{port}", "--timeout", "300", "--access-logfile",
             access_log, "placement_wsgi.wsgi:application"],
            env=environment, stdout=subprocess.DEVNULL, stderr=errors)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(url + "/", timeout=2)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("gunicorn did not answer GET / within 60 s") from None
                time.sleep(0.2)
        yield url, access_log, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


class Tally:
    """A ``finished`` callback counting the nodes per status (the run keeps no results)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, result: migrate.NodeResult) -> None:
        self.counts[result.status] = self.counts.get(result.status, 0) + 1


class StatementCount:
    """SQL statements the process sends while enabled, per phase of the run
    (SQLAlchemy's ``before_cursor_execute``: one per cursor execute, an
    executemany counting once); the phase is the last one ``progress`` named."""

    def __init__(self) -> None:
        self.phase = "check"
        self.counts: dict[str, int] = {}

    def follow(self, phase: str, done: int, total: int) -> None:
        """The run's progress: the write phase starts once the last node is checked."""
        self.phase = "write" if phase == "migrate" or done >= total else "check"

    @contextlib.contextmanager
    def counting(self, enabled: bool, nodes: int, report: dict[str, object]) -> Iterator[None]:
        """Count while the block runs (when ``enabled``), then put the statements
        per node of each phase in ``report``."""
        if not enabled:
            yield
            return
        sa.event.listen(sa.engine.Engine, "before_cursor_execute", self._count)
        try:
            yield
        finally:
            sa.event.remove(sa.engine.Engine, "before_cursor_execute", self._count)
        report.update((f"statements_per_node_{phase}", round(count / nodes, 1))
                      for phase, count in sorted(self.counts.items()))

    def _count(self, *args: object) -> None:
        self.counts[self.phase] = self.counts.get(self.phase, 0) + 1


def migrate_hosts(database: str, directory: str, hosts: Iterable[Host], transport: str,
                  workers: int, profiler: cProfile.Profile | None, progress: Progress,
                  tally: Tally, expected: int) -> int:
    """Migrate ``hosts`` (in worker processes when ``workers`` > 1), streamed as the
    command streams them (no result kept: each goes to ``tally``): the call count.

    The profiler, if given, runs around the single-process migration only.
    ``transport`` "http:URL": over HTTP to the service at URL.
    """
    streamed = {"finished": tally, "keep_results": False, "expected": expected}
    if transport.startswith("http:"):
        opener = functools.partial(manage.open_http, transport[5:], "admin",
                                   {"X-Roles": "admin,service"})
        if workers > 1:
            run = parallel.ParallelMigration(opener, hosts, workers, progress=progress,
                                             **streamed)
            run.run()
            return run.calls
        with opener() as placement:
            single = migrate.Migration(placement, hosts, progress=progress, **streamed)
            single.run()
            return single.calls
    if workers > 1:
        config = os.path.join(directory, "placement.conf")
        generate_deployment.write_config(config, database)
        run = parallel.ParallelMigration(
            functools.partial(manage.open_database, [config]), hosts, workers,
            progress=progress, **streamed)
        run.run()
        return run.calls
    conf = generate_deployment.direct_conf(database, sync=False)
    opener = open_direct(conf) if transport == "wsgi" else PlacementDirect(conf)
    gc_pause.for_a_long_run()  # as each worker process of the command does
    with opener as placement:
        single = migrate.Migration(placement, hosts, progress=progress, **streamed)
        if profiler is not None:
            profiler.enable()
        single.run()
        if profiler is not None:
            profiler.disable()
    return single.calls


def generate(database: str, hosts_dir: str, nodes: int, gpus: int, instances: int,
             kinds: tuple[str, ...], seed_through_api: bool) -> dict[str, object]:
    """:func:`seed` the deployment; what it is and how long that took."""
    start, cpu_start = time.monotonic(), time.process_time()
    summary = seed(database, hosts_dir, nodes, gpus, instances, kinds, seed_through_api)
    generated = time.monotonic() - start
    return {
        "database": database.split("://")[0], "nodes": nodes, "gpus": gpus,
        "instances_per_node": instances, "kinds": list(kinds) or ["gpus only"],
        "seeded_through": "api" if seed_through_api else "bulk inserts",
        "instances": summary.instances, "generate_seconds": round(generated, 1),
        "generate_ms_per_node": round(1000 * generated / nodes, 2),
        "generate_cpu_seconds": round(time.process_time() - cpu_start, 1)}


def over_http(database: str, directory: str, hosts: Iterable[Host], workers: int,
              progress: Progress, http_workers: int, extra: dict[str, object],
              tally: Tally, expected: int,
              peaks: process_peaks.Sampler) -> tuple[float, float, int]:
    """Migrate ``hosts`` through gunicorn on ``database``: when the migration
    started and its seconds (the service's start and stop are not timed), and the
    run's call count; ``extra`` gets the requests gunicorn's access log counted.
    ``peaks`` samples the run's workers (the service's processes left out)."""
    with gunicorn(database, directory, http_workers) as (url, access_log, server):
        peaks.exclude.append(server)
        start = time.monotonic()
        with peaks:
            calls = migrate_hosts(database, directory, hosts, f"http:{url}", workers,
                                  None, progress, tally, expected)
        seconds = time.monotonic() - start
    with open(access_log, encoding="utf-8") as lines:
        extra["served_requests"] = sum(1 for _ in lines) - 1  # - the readiness GET /
    extra["http_workers"] = http_workers
    return start, seconds, calls


def bench(database: str, directory: str, nodes: int, gpus: int, instances: int,
          kinds: tuple[str, ...], transport: str, workers: int, with_bulk_read: bool = False,
          profile: str | None = None, seed_through_api: bool = False,
          generate_only: bool = False, http_workers: int = 2,
          count_statements: bool = False) -> dict[str, object]:
    hosts_dir = os.path.join(directory, "hosts")
    generation = generate(database, hosts_dir, nodes, gpus, instances, kinds, seed_through_api)
    if generate_only:
        return {**generation, "peak_rss_mb": round(peak_rss_mb(), 1)}
    rss_before = peak_rss_mb()
    extra: dict[str, object] = bulk_read(database) if with_bulk_read else {}

    start = time.monotonic()
    files = check_readable([hosts_dir])  # parsed as the run reads them, as the command does
    loaded = time.monotonic() - start
    phase_ends: dict[str, float] = {}

    statements = StatementCount()

    def progress(phase: str, done: int, total: int) -> None:
        phase_ends[phase] = time.monotonic()
        statements.follow(phase, done, total)

    cpu_before = os.times()
    profiler = cProfile.Profile() if profile and workers <= 1 else None
    tally = Tally()
    peaks = process_peaks.Sampler()  # the workers' own peaks
    if transport == "http":
        start, migrated, calls = over_http(database, directory, iter_hosts(files), workers,
                                           progress, http_workers, extra, tally, len(files),
                                           peaks)
    else:
        start = time.monotonic()
        with peaks, statements.counting(count_statements, nodes, extra):
            calls = migrate_hosts(database, directory, iter_hosts(files), transport, workers,
                                  profiler, progress, tally, len(files))
        migrated = time.monotonic() - start
    if profile and profiler is not None:
        profiler.dump_stats(profile)
        extra["layers"] = bench_transport.layers(pstats.Stats(profiler), migrated)
    cpu = cpu_seconds_since(cpu_before) - peaks.cpu_seconds  # not the sampling's
    counts = tally.counts
    return {
        **generation, "transport": transport, "workers": workers,
        "load_host_files_seconds": round(loaded, 2),  # listing only: parsed during the run
        "migrate_seconds": round(migrated, 1),
        "migrate_plus_load_seconds": round(migrated + loaded, 1),
        "check_phase_seconds": round(phase_ends.get("check", start) - start, 1),
        "write_phase_seconds": round(
            phase_ends.get("migrate", start) - phase_ends.get("check", start), 1),
        "migrate_cpu_seconds_of_this_process_and_workers": round(cpu, 1),
        "cpu_ms_per_node": round(1000 * cpu / nodes, 1),
        "nodes_per_second": round(nodes / migrated, 1),
        "placement_calls": calls, "placement_calls_per_node": round(calls / nodes, 1),
        "peak_rss_mb_after_generate": round(rss_before, 1), **memory(peaks),
        "outcome": counts,
        "wall_seconds_at_this_rate_for_10000_nodes": round(
            (migrated + loaded) * 10000 / nodes, 0),
        **extra,
    }


def memory(peaks: process_peaks.Sampler) -> dict[str, object]:
    """This process's peak and each worker's own (``peaks``: the run's sample; none
    in one process; multiprocessing's small resource tracker counts as one)."""
    workers_mb = sorted((round(kib / 1024, 1) for kib in peaks.peaks.values()), reverse=True)
    return {"peak_rss_mb": round(peak_rss_mb(), 1),
            "peak_rss_mb_worker": workers_mb[0] if workers_mb else None,
            "peak_rss_mb_each_worker": workers_mb}


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
    parser.add_argument("--count-statements", action="store_true",
                        help="count the SQL statements of the check and the write phase "
                        "per node (one worker only)")
    parser.add_argument("--transport", choices=("wsgi", "intercept"), default="wsgi",
                        help="single-process runs only")
    parser.add_argument("--over-http", action="store_true",
                        help="migrate through a gunicorn service, then the same deployment "
                        "in-process, and compare")
    parser.add_argument("--http-workers", type=int, default=2,
                        help="gunicorn worker processes for --over-http")
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
    if args.count_statements and (workers > 1 or args.over_http):
        parser.error("--count-statements needs --workers 1, in-process")
    if args.over_http and (args.database or args.generate_only or args.profile):
        parser.error("--over-http builds its own two databases and migrates both")
    reports = [one_run(args, kinds, "http" if args.over_http else args.transport, workers)]
    if args.over_http:
        reports.append(one_run(args, kinds, args.transport, workers))
        report = {"over_http": reports[0], "in_process": reports[1],
                  "http_to_in_process_wall": round(
                      reports[0]["migrate_seconds"] / max(reports[1]["migrate_seconds"], 0.1),
                      2)}
    else:
        report = reports[0]
    print(json.dumps(report, indent=2))
    if args.generate_only:
        return 0
    counted = all(one.get("served_requests", one["placement_calls"]) == one["placement_calls"]
                  for one in reports)
    return 0 if counted and all(one["outcome"] == {"migrated": args.nodes}
                                for one in reports) else 1


def one_run(args: argparse.Namespace, kinds: tuple[str, ...], transport: str,
            workers: int) -> dict[str, object]:
    """One deployment built on its own database and migrated through ``transport``."""
    with contextlib.ExitStack() as stack:
        directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-migrate-"))
        if args.database:
            database = args.database
        elif args.engine == "sqlite":
            database = f"sqlite:///{os.path.join(directory, 'bench.sqlite')}"
        else:
            database = stack.enter_context(
                throwaway_database(args.server or SERVERS[args.engine]))
        return bench(database, directory, args.nodes, args.gpus, args.instances, kinds,
                     transport, workers, args.bulk_read, args.profile,
                     args.seed_through_api, args.generate_only, args.http_workers,
                     args.count_statements)


if __name__ == "__main__":
    try:
        with signals.interruptible():  # SIGTERM too runs the clean-ups (gunicorn, databases)
            sys.exit(main())
    except signals.Interrupted as stopped:
        sys.exit(signals.exit_status(stopped))
