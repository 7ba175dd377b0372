"""``./run_demo.sh --from-nova-db``: the rehearsal from databases alone.

1. builds a nova cell database (SQLite, tools/make_nova_cell.py): two
   computes, one disabled, pinned and unpinned guests, PCI devices held by
   guests, a resize in progress and an ironic node; and the file ``host
   collect`` would write on cmp-1 (a GPU with two mediated devices, one held
   by a guest);
2. ``describe_hosts`` writes the host descriptions from them (shown for
   cmp-1);
3. fills Placement as the old release left it: every node's root holding
   everything, the guests' allocations on it (tools/generate_deployment.py);
4. ``migrate_compute_inventory --nova-database --collected --dry-run``:
   which source gave which fact, then each node's trees and moves;
5. migrates for real, then 6. runs again: nothing left to do.

Placement's database and nova's are all it reads; no host file is needed
for the migration itself.
"""

from __future__ import annotations

import os

import generate_deployment
import make_nova_cell as cell
import yaml

from nova_reshape.cmd import manage
from nova_reshape.hostfacts import collected
from placement_wsgi.direct import PlacementDirect

GPU = "0000:84:00.0"
MDEV_HELD = "50000000-0000-4000-8000-00000000000a"
MDEV_FREE = "50000000-0000-4000-8000-00000000000b"


def banner(text: str) -> None:
    print(f"\n=== {text} {'=' * max(0, 70 - len(text))}")


def write_collected(directory: str) -> str:
    """cmp-1's collected file: one GPU (nvidia-35), two mdevs, one held by SPREAD."""
    os.makedirs(directory, exist_ok=True)
    host = collected.CollectedHost(
        host=cell.CMP1, gpus=(collected.CollectedGpu(GPU, {"nvidia-35": 6}),),
        mdevs=(collected.CollectedMdev(MDEV_HELD, GPU, "nvidia-35", cell.SPREAD),
               collected.CollectedMdev(MDEV_FREE, GPU, "nvidia-35", None)))
    path = os.path.join(directory, f"{cell.CMP1}.yaml")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(collected.dump(host))
    return path


def run(directory: str) -> int:
    nova = f"sqlite:///{os.path.join(directory, 'nova.sqlite')}"
    placement_db = f"sqlite:///{os.path.join(directory, 'placement.sqlite')}"
    conf_path = os.path.join(directory, "placement.conf")
    collected_dir = os.path.join(directory, "collected")
    host_dir = os.path.join(directory, "hosts")

    banner("1. a nova cell database and what host collect found on cmp-1")
    cell.populate(nova)
    print(f"nova cell database: {nova}")
    print(f"collected file: {write_collected(collected_dir)}")

    banner("2. nova-reshape-manage placement describe_hosts")
    code = manage.main(["placement", "describe_hosts", "--nova-database", nova,
                        "--collected", collected_dir, "--output", host_dir])
    if code != manage.EXIT_OK:
        return code
    with open(os.path.join(host_dir, f"{cell.CMP1}.yaml"), encoding="utf-8") as stream:
        print(stream.read())

    banner("3. Placement as the old release left it (flat shape)")
    generate_deployment.write_config(conf_path, placement_db)
    with PlacementDirect(generate_deployment.direct_conf(placement_db)) as placement:
        for name in sorted(os.listdir(host_dir)):
            with open(os.path.join(host_dir, name), encoding="utf-8") as stream:
                generate_deployment.write_described(placement, yaml.safe_load(stream))
    print(f"every node's root holds its guests' allocations in {placement_db}")

    command = ["--config-file", conf_path, "placement", "migrate_compute_inventory",
               "--nova-database", nova, "--collected", collected_dir]
    steps = (("4. ... migrate_compute_inventory --nova-database --collected --dry-run",
              ["--dry-run"]),
             ("5. ... migrate_compute_inventory --nova-database --collected", []),
             ("6. run again: nothing left to do", []))
    for title, extra in steps:
        banner(title)
        code = manage.main([*command, *extra])
        if code != manage.EXIT_OK:
            break
    return code
