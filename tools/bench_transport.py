#!/usr/bin/env python3
"""Cost of one Placement call on the in-process path, per transport. Not a test.

Generates a small flat deployment (tools/generate_deployment.py) on a fresh
SQLite file (or ``--database``), then sends the reads the migration makes
for one node (its tree listing, inventories, traits, aggregates, its
allocations and those of its consumers) ``--rounds`` times through each
transport and reports CPU milliseconds per call:

* ``intercept``: PlacementDirect's own client (requests through wsgi-intercept);
* ``wsgi``: the same app called directly as WSGI (``open_direct``).

With ``--profile`` the wsgi run is profiled and the time split into layers
(transport, middleware, policy, handler, transactions, SQL), the breakdown
docs/performance.md reports.

    python tools/bench_transport.py --rounds 300
    python tools/bench_transport.py --profile
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import generate_deployment  # noqa: E402

from nova_reshape.transport import open_direct  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402

#: (layer, file suffix, function): cumulative time of these functions splits a profile.
LAYER_ENTRIES = (
    ("transport", ("nova_reshape/transport/direct.py",),
     "request"),
    ("app", ("oslo_middleware/request_id.py",), "__call__"),
    ("router", ("placement_wsgi/router.py",), "__call__"),
    ("policy", ("placement_wsgi/context.py",), "can"),
    ("transactions", ("placement_wsgi/db/database.py",), "_run"),
    ("sql", ("sqlalchemy/engine/base.py",), "execute"),
)


def layers(stats: pstats.Stats, total: float) -> dict[str, dict[str, float]]:
    """Seconds, ms per request and share of ``total`` for each layer of the path."""
    cumulative: dict[str, float] = {}
    requests = 0
    for (path, _, function), (_, calls, _, seconds, _) in stats.stats.items():  # type: ignore[attr-defined]
        for name, suffixes, entry in LAYER_ENTRIES:
            if function == entry and path.endswith(suffixes):
                cumulative[name] = cumulative.get(name, 0.0) + seconds
                if name == "app":
                    requests += calls
    get = cumulative.get
    parts = {
        "caller (outside the transport)": total - get("transport", 0.0),
        "transport (request and response objects)": get("transport", 0.0) - get("app", 0.0),
        "middleware (request id, auth, context, microversion, faults)":
            get("app", 0.0) - get("router", 0.0),
        "policy": get("policy", 0.0),
        "handler (routing, JSON, schema, objects outside transactions)":
            get("router", 0.0) - get("policy", 0.0) - get("transactions", 0.0),
        "transactions (statement building, rows, begin/commit)":
            get("transactions", 0.0) - get("sql", 0.0),
        "sql (SQLAlchemy execute and the driver)": get("sql", 0.0),
    }
    return {name: {"seconds": round(seconds, 3),
                   "ms_per_request": round(1000 * seconds / max(requests, 1), 3),
                   "share": round(seconds / total, 3) if total else 0.0}
            for name, seconds in parts.items()}


def node_reads(listing: list[dict], consumers: list[str]) -> list[tuple[str, str | None]]:
    """(url, microversion) of the reads the migration makes for one node."""
    root = listing[0]["uuid"]
    reads: list[tuple[str, str | None]] = [(f"/resource_providers?in_tree={root}", "1.14")]
    for provider in listing:
        uuid = provider["uuid"]
        reads += [(f"/resource_providers/{uuid}/inventories", None),
                  (f"/resource_providers/{uuid}/aggregates", "1.19"),
                  (f"/resource_providers/{uuid}/traits", "1.6"),
                  (f"/resource_providers/{uuid}/allocations", None)]
    reads += [(f"/allocations/{consumer}", "1.28") for consumer in consumers]
    return reads


def run_rounds(placement, reads, rounds: int) -> float:
    """CPU seconds for ``rounds`` passes over ``reads`` (each answer must be 200)."""
    start = time.process_time()
    for _ in range(rounds):
        for url, version in reads:
            response = placement.get(url, microversion=version)
            if response.status_code != 200:
                raise SystemExit(f"GET {url}: {response.status_code} {response.text}")
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="passes over one node's reads")
    parser.add_argument("--database", help="empty database URL (default: a new SQLite file)")
    parser.add_argument("--profile", action="store_true",
                        help="profile the wsgi transport and split its time into layers")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-transport-") as directory:
        database = args.database or f"sqlite:///{os.path.join(directory, 'bench.sqlite')}"
        with PlacementDirect(generate_deployment.direct_conf(database)) as placement:
            generate_deployment.generate(placement, os.path.join(directory, "hosts"),
                                         hosts=4, gpus=4, instances=16)
            roots = [p for p in placement.get("/resource_providers", microversion="1.14")
                     .json()["resource_providers"] if p["parent_provider_uuid"] is None]
            listing = placement.get(f"/resource_providers?in_tree={roots[0]['uuid']}",
                                    microversion="1.14").json()["resource_providers"]
            consumers = sorted(placement.get(
                f"/resource_providers/{roots[0]['uuid']}/allocations").json()["allocations"])
        reads = node_reads(listing, consumers)
        report: dict[str, object] = {"calls_per_round": len(reads), "rounds": args.rounds}
        for name, opener in (("intercept", PlacementDirect), ("wsgi", open_direct)):
            # A configuration per transport: PlacementDirect marks the one it used.
            with opener(generate_deployment.direct_conf(database, sync=False)) as placement:
                run_rounds(placement, reads, 2)  # warm caches
                if args.profile and name == "wsgi":
                    profile = cProfile.Profile()
                    profile.enable()
                    seconds = run_rounds(placement, reads, args.rounds)
                    profile.disable()
                    report["wsgi_layers"] = layers(pstats.Stats(profile), seconds)
                else:
                    seconds = run_rounds(placement, reads, args.rounds)
            report[f"{name}_cpu_ms_per_call"] = round(
                1000 * seconds / (len(reads) * args.rounds), 3)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
