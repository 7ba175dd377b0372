#!/usr/bin/env python3
"""GET /allocation_candidates with ``&limit=`` on a large flat cloud, through gunicorn.

The shared bench (the directory given as ``--bench-dir``) times the flat query without a
limit only. This starts this checkout under gunicorn with the bench's own
``serve.sh`` (same workers, same fresh database per engine), loads the flat
scenario with the bench's ``bench.py --candidates-only`` (which also times
the query without a limit), then times the same query with each ``--limit``
over HTTP and prints one JSON document. A benchmark, not a test.

    python tools/bench_candidates_limit.py --bench-dir BENCH \\
        --engine postgresql --count 10000 --limits 1000

Needs the bench's project venv (``serve.sh setup project .``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import requests

#: The bench's flat query (placeload's perfload query), kept in step with bench.py.
FLAT_QUERY = ("resources=VCPU:1,DISK_GB:10,MEMORY_MB:256"
              "&member_of=14a5c8a3-5a99-4e8f-88be-00d85fcb1c17"
              "&required=HW_CPU_X86_AVX2")


def _server_env(output: str) -> dict[str, str]:
    values = {}
    for line in output.splitlines():
        for field in line.split():
            key, sep, value = field.partition("=")
            if sep and key in ("PID", "PORT", "URL", "RUN_DIR", "DB"):
                values[key] = value
    return values


def _time(url: str, query: str, samples: int, warmup: int) -> dict[str, float | int]:
    headers = {"OpenStack-API-Version": "placement latest", "Accept": "application/json",
               "X-Auth-Token": "admin"}
    session = requests.Session()
    seconds = []
    count = 0
    for index in range(warmup + samples):
        start = time.perf_counter()
        response = session.get(f"{url}/allocation_candidates?{query}", headers=headers,
                               timeout=300)
        elapsed = time.perf_counter() - start
        response.raise_for_status()
        count = len(response.json()["allocation_requests"])
        if index >= warmup:
            seconds.append(elapsed)
    seconds.sort()
    return {"median_s": round(statistics.median(seconds), 4),
            "p95_s": round(seconds[max(0, int(len(seconds) * 0.95) - 1)], 4),
            "allocation_requests": count, "samples": samples}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", required=True, help="the shared bench folder")
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "postgresql", "mysql"))
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--limits", default="1000", help="comma list of limits")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=4)
    args = parser.parse_args(argv)
    bench_dir = os.path.abspath(args.bench_dir)
    serve = os.path.join(bench_dir, "serve.sh")
    with tempfile.TemporaryDirectory(prefix="bench-limit-") as run_dir:
        started = subprocess.run(
            ["bash", serve, "start", "project", "--db", args.engine, "--run-dir", run_dir],
            check=False, capture_output=True, text=True)
        if started.returncode != 0:
            sys.stderr.write(started.stderr)
            return 1
        server = _server_env(started.stdout + started.stderr)
        try:
            loaded = os.path.join(run_dir, "bench.json")
            subprocess.run(
                [sys.executable, os.path.join(bench_dir, "bench.py"), "--url", server["URL"],
                 "--scenario", "flat", "--count", str(args.count), "--candidates-only",
                 "--engine", args.engine, "--quiet", "--out", loaded],
                check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(loaded, encoding="utf-8") as stream:
                checks_ok = json.load(stream)["ok"]
            report: dict[str, object] = {"engine": args.engine, "count": args.count,
                                         "bench_load_and_checks_ok": checks_ok}
            for limit in (int(value) for value in args.limits.split(",") if value):
                query = FLAT_QUERY + "&" + urllib.parse.urlencode({"limit": limit})
                report[f"limit_{limit}"] = _time(server["URL"], query, args.samples,
                                                 args.warmup)
            report["no_limit"] = _time(server["URL"], FLAT_QUERY, args.samples, args.warmup)
        finally:
            subprocess.run(["bash", serve, "stop", run_dir], check=False,
                           capture_output=True)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
