#!/usr/bin/env python3
"""Benchmark placement-status upgrade check and db online_data_migrations.

A timed benchmark, not a test. On a throwaway database (a temporary SQLite
file, or a database it creates on ``--server`` and drops) at head, it
writes ``--providers`` resource providers without a root provider id and
allocations (two each, on two providers) of ``--consumers`` consumers
without a consumer record, as releases before Stein left them, in a few
bulk statements; then times, through the console scripts' ``main()``
in-process:

* ``placement-status upgrade check`` (expects exit 2: failure);
* ``placement-manage db online_data_migrations`` (batches of 50 until done);
* the check again (expects 0) and the migrations again (expects 0, nothing
  found).

Prints one JSON document. Example::

    python tools/bench_online_migrations.py --providers 10000 --consumers 100000 \\
        --server postgresql+psycopg://postgres@127.0.0.1:5432
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

from placement_wsgi.cmd import manage, status
from placement_wsgi.db import migration
from placement_wsgi.db.database import Database
from placement_wsgi.testing.databases import ServerDatabase

#: Rows per INSERT statement while writing the damage.
CHUNK = 5000


def _insert(connection: sa.Connection, sql: str, rows: list[dict]) -> None:
    for start in range(0, len(rows), CHUNK):
        connection.execute(sa.text(sql), rows[start:start + CHUNK])


def damage(url: str, providers: int, consumers: int) -> None:
    """Rootless providers; two healthy providers holding consumerless allocations."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            _insert(connection, "INSERT INTO resource_providers (id, uuid, name, generation, "
                    "root_provider_id) VALUES (:id, :uuid, :uuid, 0, :root)",
                    [{"id": n, "uuid": str(uuid.uuid4()), "root": n if n <= 2 else None}
                     for n in range(1, providers + 3)])
            _insert(connection, "INSERT INTO allocations (resource_provider_id, consumer_id, "
                    "resource_class_id, used) VALUES (:rp, :consumer, 0, 1)",
                    [{"rp": rp, "consumer": consumer}
                     for consumer in (str(uuid.uuid4()) for _ in range(consumers))
                     for rp in (1, 2)])
    finally:
        engine.dispose()


def timed(main, argv: list[str]) -> tuple[int, float]:  # noqa: ANN001 - a console main()
    """Exit status and seconds of one in-process command, its output swallowed."""
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, round(time.perf_counter() - started, 3)


def run(url: str, providers: int, consumers: int) -> dict:
    database = Database(url)
    migration.upgrade(database)
    database.dispose()
    damage(url, providers, consumers)
    os.environ["OS_PLACEMENT_DATABASE__CONNECTION"] = url
    figures: dict = {"providers": providers, "consumers": consumers}
    check = ["upgrade", "check"]
    migrate = ["db", "online_data_migrations"]
    for step, (main, argv) in (("check_before", (status.main, check)),
                               ("migrate", (manage.main, migrate)),
                               ("check_after", (status.main, check)),
                               ("migrate_again", (manage.main, migrate))):
        code, seconds = timed(main, argv)
        figures[f"{step}_exit"] = code
        figures[f"{step}_seconds"] = seconds
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=10_000)
    parser.add_argument("--consumers", type=int, default=100_000)
    parser.add_argument("--server", default="",
                        help="PostgreSQL or MariaDB server URL (no database); default SQLite")
    args = parser.parse_args()
    server = ServerDatabase(args.server) if args.server else None
    directory = tempfile.TemporaryDirectory(prefix="bench-online-")
    url = server.url if server else f"sqlite:///{directory.name}/placement.sqlite"
    try:
        figures = run(url, args.providers, args.consumers)
        figures["engine"] = sa.engine.make_url(url).get_backend_name()
    finally:
        if server is not None:
            server.close()
        directory.cleanup()
    print(json.dumps(figures, indent=2))
    expected = {"check_before_exit": 2, "migrate_exit": 0, "check_after_exit": 0,
                "migrate_again_exit": 0}
    return 0 if all(figures[key] == value for key, value in expected.items()) else 1


if __name__ == "__main__":
    sys.exit(main())
