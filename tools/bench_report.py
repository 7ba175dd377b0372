#!/usr/bin/env python3
"""Benchmark of ``migrate_compute_inventory --report``: a report of N nodes, its size and
how fast headless Chromium opens it.

Generates a flat deployment on a fresh SQLite file with the generator's
bulk inserts (every kind: GPUs, PCI devices, an FPGA, NUMA cells, pinned
guests, a disabled host; not measured), runs the dry run twice through
PlacementDirect, without and with ``--report FILE.html`` (so the report's
own cost shows), and reports the run times, the processes' peak memory, the
file's size, the time Chromium takes from navigation to the load event,
and the time to expand one node (its trees drawn on demand). Figures are
in docs/performance.md. Not a test.

    python tools/bench_report.py --nodes 10000
    python tools/bench_report.py --nodes 1000 --keep /tmp/report-bench
    python tools/bench_report.py --nodes 1 --gpus 1 --instances 1 --repeat 1   # smallest
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, ROOT)
sys.path.insert(0, TOOLS)

import generate_deployment  # noqa: E402

from tests.fixtures import chromium  # noqa: E402

#: Runs the command in a child process, so each run's peak memory is its own.
_RUN = """
import resource, sys, time
from nova_reshape.cmd import manage
if __name__ == "__main__":
    start = time.monotonic()
    code = manage.main(sys.argv[1:], out=open("/dev/null", "w"))
    seconds = time.monotonic() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(code, round(seconds, 1), round(own), round(workers))
"""


def run_command(argv: list[str]) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _RUN, *argv], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    code, seconds, own, workers = done.stdout.split()
    return {"exit": int(code), "seconds": float(seconds), "peak_mb": float(own),
            "largest_worker_peak_mb": float(workers)}


def open_in_chromium(path: str, repeat: int = 3) -> dict[str, float]:
    binary = chromium.chromium_binary()
    if binary is None:
        return {"chromium": "; ".join(chromium.UNAVAILABLE)}
    loads, expands = [], []
    with chromium.Browser(binary, timeout=120) as browser:
        for _ in range(repeat):
            loads.append(browser.open(path))
            start = time.monotonic()
            browser.evaluate("var n = document.querySelectorAll('details.node');"
                             "n[n.length - 1].open = true")
            while not browser.evaluate("document.querySelectorAll('svg.tree').length"):
                time.sleep(0.005)
            expands.append(time.monotonic() - start)
        errors = list(browser.errors)
    return {"load_seconds_best": round(min(loads), 3), "load_seconds_worst": round(max(loads), 3),
            "expand_last_node_seconds": round(min(expands), 3), "console_errors": len(errors)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--keep", metavar="DIR", help="keep the database, hosts and report here")
    parser.add_argument("--repeat", type=int, default=3,
                        help="times Chromium opens the report (best and worst reported)")
    args = parser.parse_args(argv)
    directory = args.keep or tempfile.mkdtemp(prefix="bench-report-")
    os.makedirs(directory, exist_ok=True)
    database = f"sqlite:///{os.path.join(directory, 'placement.sqlite')}"
    hosts = os.path.join(directory, "hosts")
    conf = os.path.join(directory, "placement.conf")
    generate_deployment.write_config(conf, database)
    start = time.monotonic()
    generate_deployment.generate_bulk(
        generate_deployment.open_database(database), hosts, hosts=args.nodes, gpus=args.gpus,
        instances=args.instances,
        kinds=(*generate_deployment.KINDS, *generate_deployment.EXTRA_KINDS))
    figures: dict[str, object] = {"nodes": args.nodes, "gpus": args.gpus,
                                  "instances": args.instances,
                                  "generate_seconds": round(time.monotonic() - start, 1),
                                  "load_average": os.getloadavg()[0]}
    command = ["--config-file", conf, "placement", "migrate_compute_inventory",
               "--host-file", hosts, "--dry-run"]
    figures["dry_run"] = run_command(command)
    report = os.path.join(directory, "report.html")
    figures["dry_run_with_report"] = run_command([*command, "--report", report])
    figures["report_mb"] = round(os.path.getsize(report) / 1e6, 2)
    figures["browser"] = open_in_chromium(report, args.repeat)
    figures["load_average_after"] = os.getloadavg()[0]
    figures["bench_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
