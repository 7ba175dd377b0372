#!/usr/bin/env python
"""Time (and optionally profile) GET /allocation_candidates in-process.

Builds the bench's "nested" deployment (a 7-provider tree: a compute node with
disk, two NUMA children with CPU and memory, FPGAs and a vGPU below them;
``--trees`` copies) or its
"flat" one
(``--flat``: one provider per tree, aggregates and traits as placeload) with
bulk inserts into a fresh database, then calls the WSGI app (the whole
middleware pipeline, microversion ``latest``) ``--runs`` times and prints
the median and best wall time. ``--profile`` adds a cProfile of one extra
call, sorted by cumulative time; ``--statements`` times every SQL statement
of one extra call (server round trip plus fetch, per statement).

The database is a fresh SQLite file unless ``--database URL`` names a
PostgreSQL or MySQL/MariaDB server: without a database part in the URL a
throwaway database (``--database-prefix`` plus a random suffix) is created
there and dropped at the end; with one, that database must be empty and
is left behind.

    python tools/profile_candidates.py [--flat] [--trees 1000] [--profile]
        [--database mysql+pymysql://root@127.0.0.1:3306]

Instruction counts (independent of the machine's load), per call = the
"Collected" count divided by ``--runs``:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --toggle-collect=_operator_call \
        .venv/bin/python tools/profile_candidates.py --callgrind --runs 3 [--flat]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import operator
import pathlib
import pstats
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator

import sqlalchemy as sa
import webob

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from placement_wsgi import deploy, heap  # noqa: E402
from placement_wsgi.db import tables  # noqa: E402
from placement_wsgi.testing.databases import created_database  # noqa: E402
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


@contextlib.contextmanager
def database_url(server: str | None, prefix: str) -> Iterator[str]:
    """A URL of an empty database for one run (see the module docstring)."""
    if server is None:
        with tempfile.TemporaryDirectory() as directory:
            yield f"sqlite:///{directory}/profile.sqlite"
        return
    url = sa.engine.make_url(server)
    if url.database:
        yield server
        return
    with created_database(server, prefix) as created:
        yield created


@contextlib.contextmanager
def statement_timer(app) -> Iterator[list[tuple[float, int, str]]]:
    """Record (seconds, rows, SQL) of every statement run while open.

    Statements run through SQLAlchemy are timed by its cursor events; those
    the candidate engine runs on the raw DB-API cursor (``connection_rows``
    and ``Statement.rows`` in :mod:`placement_wsgi.db.rows`) by wrapping
    that module's two cursor helpers (private: this is a profiling tool).
    """
    from placement_wsgi.db import rows as rows_module

    engine = app.placement_app.database.engine
    timings: list[tuple[float, int, str]] = []
    started: dict[int, float] = {}

    def before(_conn, cursor, _statement, *_args) -> None:  # noqa: ANN001
        started[id(cursor)] = time.perf_counter()

    def after(_conn, cursor, statement, *_args) -> None:  # noqa: ANN001
        timings.append((time.perf_counter() - started.pop(id(cursor)), cursor.rowcount,
                        statement))

    run, read_packed = rows_module._run, rows_module._read_packed

    def timed_run(connection: sa.Connection, text: str, params,  # noqa: ANN001
                  binary: bool = False) -> list[tuple]:
        start = time.perf_counter()
        found = run(connection, text, params, binary)
        timings.append((time.perf_counter() - start, len(found), text))
        return found

    def timed_packed(connection: sa.Connection, packed) -> list[tuple] | None:  # noqa: ANN001
        start = time.perf_counter()
        found = read_packed(connection, packed)
        timings.append((time.perf_counter() - start, -1 if found is None else len(found),
                        packed.text))
        return found

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    rows_module._run, rows_module._read_packed = timed_run, timed_packed
    try:
        yield timings
    finally:
        rows_module._run, rows_module._read_packed = run, read_packed
        sa.event.remove(engine, "before_cursor_execute", before)
        sa.event.remove(engine, "after_cursor_execute", after)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--flat", action="store_true")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--statements", action="store_true",
                        help="time every SQL statement of one extra call")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--limit", type=int, help="add &limit=N to the query")
    parser.add_argument("--callgrind", action="store_true",
                        help="make the --runs calls inside operator.call and time nothing: run "
                             "under valgrind --tool=callgrind --toggle-collect=_operator_call "
                             "to count the instructions of those calls only")
    parser.add_argument("--database", metavar="URL",
                        help="PostgreSQL/MySQL server (or empty database) instead of SQLite")
    parser.add_argument("--database-prefix", default="profile_candidates_",
                        help="name prefix of the throwaway server database")
    args = parser.parse_args()
    heap.keep_freed_memory()  # as the service does at start
    with database_url(args.database, args.database_prefix) as url:
        app = deploy.loadapp(make_conf(url, placement_database={"sync_on_startup": True}))
        try:
            measure(app, args)
        finally:
            app.placement_app.database.dispose()


def measure(app, args: argparse.Namespace) -> None:
    """Seed, check one answer, time ``args.runs`` calls, then profile/trace one."""
    query = seed(app, args.trees, args.flat)
    if args.limit:
        query += f"&limit={args.limit}"
    response = call(app, query)
    body = json.loads(response.body)
    print(f"{app.placement_app.database.dialect}: status {response.status_int}, "
          f"{len(body['allocation_requests'])} requests, "
          f"{len(body['provider_summaries'])} summaries, {len(response.body)} bytes")
    for _ in range(3):
        call(app, query)
    if args.callgrind:
        # the one place operator.call runs: callgrind counts only inside it
        operator.call(lambda: [call(app, query) for _ in range(args.runs)])
        print(f"{args.runs} calls made inside operator.call")
        return
    times, cpu_times = [], []
    for _ in range(args.runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        call(app, query)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    # this process's CPU time leaves out a database server's work but also
    # most of the noise of a shared machine
    print(f"median {statistics.median(times) * 1000:.1f} ms, "
          f"best {min(times) * 1000:.1f} ms over {args.runs} runs; "
          f"client CPU median {statistics.median(cpu_times) * 1000:.1f} ms")
    if args.statements:
        with statement_timer(app) as timings:
            start = time.perf_counter()
            call(app, query)
            total = time.perf_counter() - start
        print(f"{len(timings)} statements, {sum(t for t, _, _ in timings) * 1000:.1f} ms "
              f"of {total * 1000:.1f} ms")
        for seconds, rows, statement in timings:
            text = " ".join(statement.split())
            print(f"{seconds * 1000:8.2f} ms {rows:6d} rows  {text[:160]}")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        call(app, query)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
