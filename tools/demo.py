#!/usr/bin/env python3
"""The fast-forward-upgrade reshape, start to finish, on a fresh SQLite file.

1. generates a small pre-upgrade deployment in the old flat shape (GPUs,
   NUMA cells, PCI devices and an FPGA per host, instances using them,
   CPU pinning as before Train: pinned guests holding VCPU, plus an ironic
   node; the first host's compute service is disabled) with
   tools/generate_deployment.py;
2. runs ``nova-reshape-manage placement migrate_compute_inventory
   --dry-run``: each node's tree before and after, every allocation move
   (a pinned guest's VCPU converted to PCPU among them) and the plan, then
   the scheduling check for the demo's flavors (``--flavors-file``): per
   flavor the valid hosts and how many more fit, before -> after;
3. runs it for real (PlacementDirect on the database; no service running),
   writing the run's HTML report (``--report``) and printing its path;
4. draws the first node's tree as Placement now holds it (still disabled:
   ``COMPUTE_STATUS_DISABLED`` on its root) and a pinned guest's allocations
   before and after;
5. prints ``nova-reshape-scheduler capacity``'s table: per flavor, per host
   whether it is valid (or why not) and how many more instances fit;
6. runs it once more to show that a migrated deployment is left alone.

    python tools/demo.py [--hosts 2] [--instances 4] [--keep DIR] [--report FILE]

The report goes to FILE, else to DIR/report.html with ``--keep``, else to a
new file in the temporary directory that outlives the demo.

With ``--from-nova-db`` the rehearsal starts from a nova cell database
instead of generated host files (tools/demo_from_nova.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TOOLS))
sys.path.insert(0, TOOLS)

import demo_from_nova  # noqa: E402
import generate_deployment  # noqa: E402

from nova_reshape.cmd import manage, render  # noqa: E402
from nova_reshape.report import SchedulerReportClient  # noqa: E402
from nova_reshape.scheduler import cmd as scheduler_cmd  # noqa: E402
from placement_wsgi.direct import PlacementDirect  # noqa: E402

#: The flavors the demo's scheduling check answers for (docs/scheduler.md's format).
FLAVORS = """flavors:
  - {name: m1.medium, vcpus: 2, memory_mb: 4096, root_gb: 20}
  - {name: g1.vgpu, vcpus: 2, memory_mb: 4096, root_gb: 20,
     extra_specs: {"resources:VGPU": "1"}}
  - {name: g2.vgpu, vcpus: 2, memory_mb: 4096, root_gb: 20,
     extra_specs: {"resources:VGPU": "2"}}
  - {name: p2.pinned, vcpus: 2, memory_mb: 4096, root_gb: 20,
     extra_specs: {"hw:cpu_policy": "dedicated"}}
"""


def banner(text: str) -> None:
    print(f"\n=== {text} {'=' * max(0, 70 - len(text))}")


def _allocations(placement: object, consumer: str) -> dict[str, dict[str, int]]:
    """The consumer's allocations, provider name -> resources."""
    names = {p["uuid"]: p["name"] for p in placement.get(
        "/resource_providers", microversion="1.14").json()["resource_providers"]}
    held = placement.get(f"/allocations/{consumer}", microversion="1.28").json()
    return {names[rp]: entry["resources"] for rp, entry in held["allocations"].items()}


def run(directory: str, hosts: int, instances: int, report: str) -> int:
    database = f"sqlite:///{os.path.join(directory, 'placement.sqlite')}"
    conf_path = os.path.join(directory, "placement.conf")
    host_dir = os.path.join(directory, "hosts")
    generate_deployment.write_config(conf_path, database)

    banner("1. generate a pre-upgrade deployment (flat shape)")
    with PlacementDirect(generate_deployment.direct_conf(database)) as placement:
        summary = generate_deployment.generate(
            placement, host_dir, hosts=hosts + 1, gpus=2, instances=instances, ironic=1,
            kinds=(*generate_deployment.KINDS, "pinned", "disabled"))
        pinned = generate_deployment.stable_uuid(0, "cmp-0000/instance-3")
        before = _allocations(placement, pinned)
    print(f"{summary.hosts} compute hosts with {summary.instances} instances and "
          f"{summary.ironic} ironic node in {database}; host files in {host_dir}")

    flavors = os.path.join(directory, "flavors.yaml")
    with open(flavors, "w", encoding="utf-8") as stream:
        stream.write(FLAVORS)
    command = ["--config-file", conf_path, "placement", "migrate_compute_inventory",
               "--host-file", host_dir, "--flavors-file", flavors]
    banner("2. nova-reshape-manage ... migrate_compute_inventory --dry-run")
    code = manage.main([*command, "--dry-run"])
    if code != manage.EXIT_OK:
        return code

    banner("3. nova-reshape-manage ... migrate_compute_inventory --report FILE.html")
    code = manage.main([*command, "--report", report])
    print(f"report: {report} (one self-contained page: open it in a browser)")
    if code != manage.EXIT_OK:
        return code

    banner("4. cmp-0000 as Placement holds it now")
    root = generate_deployment.stable_uuid(0, "cmp-0000")
    with PlacementDirect(generate_deployment.direct_conf(database, sync=False)) as placement:
        tree = SchedulerReportClient(placement).get_provider_tree_and_ensure_root(
            None, root, name="cmp-0000")
        print("\n".join(render.draw_tree(tree, root)))
        disabled = "COMPUTE_STATUS_DISABLED" in tree.data(root).traits
        print(f"cmp-0000 is disabled in nova and its root "
              f"{'still carries' if disabled else 'LOST'} COMPUTE_STATUS_DISABLED")
        if instances > 3:
            print(f"pinned guest {pinned} (hw:cpu_policy=dedicated):")
            print(f"  before: {before}")
            print(f"  after:  {_allocations(placement, pinned)}")

    banner("5. nova-reshape-scheduler capacity: per flavor and host, how many more fit")
    scheduler_cmd.main(["capacity", "--placement-database", database, "--flavors-file",
                        flavors])

    banner("6. run again: nothing left to do")
    return manage.main(command)


def report_path(args: argparse.Namespace) -> str:
    """Where the report goes: kept after the demo's temporary directory is gone."""
    if args.report:
        return os.path.abspath(args.report)
    if args.keep:
        return os.path.abspath(os.path.join(args.keep, "report.html"))
    descriptor, path = tempfile.mkstemp(prefix="nova-reshape-demo-report-", suffix=".html")
    os.close(descriptor)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2, help="compute hosts (default 2)")
    parser.add_argument("--instances", type=int, default=4,
                        help="instances per host (default 4)")
    parser.add_argument("--keep", metavar="DIR",
                        help="write the database and host files here and keep them")
    parser.add_argument("--from-nova-db", action="store_true",
                        help="start from a nova cell database and a collected file "
                        "(describe, dry run, migrate, re-run); --hosts/--instances unused")
    parser.add_argument("--report", metavar="FILE",
                        help="where the migration's HTML report goes (default: report.html "
                        "in --keep's DIR, else a new file in the temporary directory)")
    args = parser.parse_args(argv)

    def rehearse(directory: str) -> int:
        if args.from_nova_db:
            return demo_from_nova.run(directory)
        return run(directory, args.hosts, args.instances, report_path(args))

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        return rehearse(args.keep)
    with tempfile.TemporaryDirectory(prefix="nova-reshape-demo-") as directory:
        return rehearse(directory)


if __name__ == "__main__":
    sys.exit(main())
