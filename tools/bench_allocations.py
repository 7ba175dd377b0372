#!/usr/bin/env python3
"""Benchmark allocation claims and the reshaper through gunicorn (issue 3).

A timed benchmark, not a test. It starts ``gunicorn placement_wsgi.wsgi:
application`` on 127.0.0.1 against a fresh database (a throwaway PostgreSQL
or MariaDB database it creates and drops, or a temporary SQLite file), then
measures:

* claims per second: ``--clients`` threads each doing ``PUT
  /allocations/{new consumer}`` (1.38, consumer_generation null) against
  ``--providers`` providers, for at most ``--seconds`` or ``--claims``;
* reshaper latency: a tree of one compute node and ``--children`` children
  with ``--consumers`` consumers on the compute node; each round moves VCPU
  and every consumer's VCPU allocation to the children (and back), timing
  ``POST /reshaper``.

Example::

    python tools/bench_allocations.py --engine postgresql \\
        --server-url postgresql+psycopg://postgres@127.0.0.1:5432
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import requests

from placement_wsgi.testing.databases import ServerDatabase

HEADERS = {"x-auth-token": "admin", "x-roles": "admin,service",
           "openstack-api-version": "placement 1.38", "accept": "application/json"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ThrowawayDatabase:
    """A database created for this run and dropped afterwards (on a server, the
    public test harness's throwaway database: placement_wsgi.testing.databases)."""

    def __init__(self, engine: str, server_url: str | None) -> None:
        self.on_server = ServerDatabase(server_url) if engine != "sqlite" else None
        if self.on_server is not None:
            self.url = self.on_server.url
            return
        self.directory = tempfile.mkdtemp(prefix="bench-allocations-")
        self.url = f"sqlite:///{self.directory}/placement.sqlite"

    def drop(self) -> None:
        if self.on_server is not None:
            self.on_server.close()


class Server:
    """gunicorn serving the app; stopped by the PID it started."""

    def __init__(self, url: str, workers: int) -> None:
        self.port = _free_port()
        environment = dict(os.environ)
        environment.update({
            "OS_PLACEMENT_DATABASE__CONNECTION": url,
            "OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP": "True",
            "OS_API__AUTH_STRATEGY": "noauth2",
        })
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--preload",
             "--bind", f"127.0.0.1:{self.port}", "--timeout", "300",
             "placement_wsgi.wsgi:application"],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(self.base + "/", timeout=2).status_code == 200:
                    return
            except requests.ConnectionError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("gunicorn did not answer GET / within 60 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _provider(session: requests.Session, base: str, name: str,
              parent: str | None = None, inventories: dict | None = None) -> str:
    body = {"name": name}
    if parent:
        body["parent_provider_uuid"] = parent
    response = session.post(base + "/resource_providers", json=body, headers=HEADERS)
    response.raise_for_status()
    provider = response.json()
    if inventories:
        session.put(f"{base}/resource_providers/{provider['uuid']}/inventories", json={
            "resource_provider_generation": provider["generation"],
            "inventories": inventories}, headers=HEADERS).raise_for_status()
    return provider["uuid"]


def _claim_body(provider: str, amount: int = 1, generation=None) -> dict:
    return {"allocations": {provider: {"resources": {"VCPU": amount}}},
            "project_id": "bench", "user_id": "bench", "consumer_generation": generation,
            "consumer_type": "INSTANCE"}


def bench_claims(base: str, clients: int, providers: int, seconds: float,
                 max_claims: int) -> dict:
    session = requests.Session()
    targets = [_provider(session, base, f"claims-{n}",
                         inventories={"VCPU": {"total": 1_000_000, "max_unit": 16}})
               for n in range(providers)]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    issued = [0]

    def client(index: int) -> None:
        own = requests.Session()
        while time.monotonic() < stop_at:
            with lock:
                if issued[0] >= max_claims:
                    return
                issued[0] += 1
                count = issued[0]
            started = time.perf_counter()
            response = own.put(f"{base}/allocations/{uuid.uuid4()}",
                               json=_claim_body(targets[(index + count) % len(targets)]),
                               headers=HEADERS)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    latencies.sort()
    return {
        "clients": clients, "providers": providers, "claims": len(latencies),
        "wall_s": round(wall, 3), "claims_per_s": round(len(latencies) / wall, 1),
        "median_ms": round(statistics.median(latencies) * 1000, 2),
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 2),
        "statuses": statuses,
    }


def bench_reshaper(base: str, children: int, consumers: int, rounds: int) -> dict:
    session = requests.Session()
    compute = _provider(session, base, "reshape-compute",
                        inventories={"VCPU": {"total": consumers * 2},
                                     "MEMORY_MB": {"total": consumers * 1024}})
    kids = [_provider(session, base, f"reshape-child-{n}", parent=compute)
            for n in range(children)]
    owners = [str(uuid.uuid4()) for _ in range(consumers)]
    for consumer in owners:
        body = {"allocations": {compute: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}},
                "project_id": "bench", "user_id": "bench", "consumer_generation": None,
                "consumer_type": "INSTANCE"}
        session.put(f"{base}/allocations/{consumer}", json=body,
                    headers=HEADERS).raise_for_status()
    per_child = -(-consumers // children)
    latencies = []
    for round_number in range(rounds):
        to_children = round_number % 2 == 0
        generations = {uuid_: session.get(f"{base}/resource_providers/{uuid_}",
                                          headers=HEADERS).json()["generation"]
                       for uuid_ in [compute, *kids]}
        inventories = {}
        if to_children:
            inventories[compute] = {"MEMORY_MB": {"total": consumers * 1024}}
            for kid in kids:
                inventories[kid] = {"VCPU": {"total": per_child * 2}}
        else:
            inventories[compute] = {"VCPU": {"total": consumers * 2},
                                    "MEMORY_MB": {"total": consumers * 1024}}
            for kid in kids:
                inventories[kid] = {}
        allocations = {}
        for index, consumer in enumerate(owners):
            view = session.get(f"{base}/allocations/{consumer}", headers=HEADERS).json()
            if to_children:
                placed = {compute: {"resources": {"MEMORY_MB": 512}},
                          kids[index // per_child]: {"resources": {"VCPU": 1}}}
            else:
                placed = {compute: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}}
            allocations[consumer] = {
                "allocations": placed, "project_id": "bench", "user_id": "bench",
                "consumer_generation": view["consumer_generation"],
                "consumer_type": "INSTANCE"}
        body = {"inventories": {
                    uuid_: {"resource_provider_generation": generations[uuid_],
                            "inventories": inventories[uuid_]}
                    for uuid_ in inventories},
                "allocations": allocations}
        started = time.perf_counter()
        response = session.post(f"{base}/reshaper", json=body, headers=HEADERS)
        latencies.append(time.perf_counter() - started)
        if response.status_code != 204:
            raise RuntimeError(f"reshape failed: {response.status_code} {response.text}")
    return {"providers": 1 + children, "consumers": consumers, "rounds": rounds,
            "median_ms": round(statistics.median(latencies) * 1000, 1),
            "max_ms": round(max(latencies) * 1000, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgresql", "mysql"],
                        default="postgresql")
    parser.add_argument("--server-url", help="SQLAlchemy URL of the database server "
                        "(no database part), for postgresql and mysql")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--providers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--claims", type=int, default=5000)
    parser.add_argument("--children", type=int, default=9)
    parser.add_argument("--consumers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    if args.engine != "sqlite" and not args.server_url:
        parser.error(f"--server-url is required for {args.engine}")
    database = ThrowawayDatabase(args.engine, args.server_url)
    server = None
    try:
        server = Server(database.url, args.workers)
        result = {
            "engine": args.engine, "workers": args.workers,
            "claims": bench_claims(server.base, args.clients, args.providers, args.seconds,
                                   args.claims),
            "reshaper": bench_reshaper(server.base, args.children, args.consumers,
                                       args.rounds),
        }
    finally:
        if server is not None:
            server.stop()
        database.drop()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
