"""``nova-reshape-manage placement describe_hosts``: host description files from nova's database.

::

    nova-reshape-manage placement describe_hosts --nova-database URL \\
        [--host NAME]... [--collected DIR] [--cyborg-database URL] \\
        [--nova-config FILE]... --output DIR

Reads nova's cell database (and Cyborg's) read-only and writes one host
description per service host to ``DIR/<host>.yaml``, merging what ``host
collect`` found on each hypervisor and what the hosts' nova.conf says. See docs/describe-hosts.md.

Exit status: 0 written; 1 a database could not be read; 2 bad input (URL,
unknown host, unreadable collected file or nova.conf, output directory).
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from nova_reshape.cmd.refusal import EXIT_OK, PROGRAM, ExitClass, Refusal, database_refusal
from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import describe, output
from nova_reshape.nova.conf.compute import load_nova_conf
from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb import cyborg, reader
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError, display_url
from nova_reshape.virt.host import HostDescriptionError, parse_host


def add_parser(actions: Any) -> None:
    """Register ``placement describe_hosts`` under the placement category's actions."""
    parser = actions.add_parser(
        "describe_hosts", help="write host description files from nova's cell database")
    parser.add_argument("--nova-database", metavar="URL", required=True,
                        help="SQLAlchemy URL of the nova cell database (read only)")
    parser.add_argument("--host", action="append", metavar="NAME", dest="hosts", default=[],
                        help="describe only this service host; repeatable (default: all)")
    parser.add_argument("--collected", metavar="DIR",
                        help="directory of files written by 'host collect' to merge")
    parser.add_argument("--cyborg-database", metavar="URL",
                        help="SQLAlchemy URL of Cyborg's database (read only), for accelerators")
    parser.add_argument("--nova-config", action="append", metavar="FILE", dest="nova_configs",
                        default=[], help="the hosts' nova.conf (repeatable, later files win): "
                        "PCI device_spec tags, enabled_mdev_types, CPU sets nova's database "
                        "lacks")
    parser.add_argument("--output", metavar="DIR", required=True,
                        help="directory to write <host>.yaml files into (created if missing)")
    parser.set_defaults(run=describe_hosts, verbose=False)


def describe_hosts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command; what cannot be read or written raised as a :class:`Refusal`."""
    try:
        return _describe_hosts(args, out, err)
    except (BadDatabaseURL, DatabaseReadError) as error:
        raise database_refusal(error) from error
    except (HostDescriptionError, NovaConfError) as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error
    except OSError as error:
        raise Refusal(ExitClass.BAD_INPUT, f"{error.filename or args.output}: "
                      f"{error.strerror or error}") from error


def _describe_hosts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise Refusal(ExitClass.BAD_INPUT, f"--output {args.output}: not a directory")
    conf = load_nova_conf(args.nova_configs) if args.nova_configs else None
    collected = collected_mod.load_collected_dir(args.collected) if args.collected else {}
    snapshot = reader.read_cell(args.nova_database, args.hosts)
    missing = describe.unknown_hosts(args.hosts, snapshot)
    if missing:
        raise Refusal(ExitClass.BAD_INPUT, f"no compute node of host {', '.join(missing)} "
                      "in the nova database")
    accelerators = cyborg.read_cyborg(args.cyborg_database) if args.cyborg_database else None
    for host in describe.collected_without_nova(collected, snapshot):
        if not args.hosts:
            err.write(f"{PROGRAM}: warning: {collected[host].path}: host {host} has no "
                      "compute node in the nova database; not used\n")
    os.makedirs(args.output, exist_ok=True)
    descriptions = [describe.describe_host(snapshot, host, collected.get(host), accelerators,
                                           conf)
                    for host in snapshot.hosts()]
    # What the migration would refuse is refused here, before any file is written.
    for description in descriptions:
        parse_host(description.document,
                   os.path.join(args.output, output.file_name(description.host)))
    for description in descriptions:
        sources = [f"nova database {display_url(args.nova_database)}: compute_nodes, "
                   "services, instances, instance_extra, pci_devices, migrations"]
        if description.host in collected:
            sources.append(f"host collect: {collected[description.host].path}")
        if args.nova_configs:
            sources.append(f"nova.conf: {', '.join(args.nova_configs)}")
        if args.cyborg_database:
            sources.append(f"cyborg database {display_url(args.cyborg_database)}")
        comment = output.header(
            f"Host description of {description.host}, written by {PROGRAM} placement "
            "describe_hosts (docs/describe-hosts.md)", sources, description.notes)
        path = os.path.join(args.output, output.file_name(description.host))
        output.write_atomically(path, output.render(description.document, comment))
        for note in description.notes:
            err.write(f"{PROGRAM}: note: {description.host}: {note}\n")
        out.write(f"{path}: {len(description.document['nodes'])} node(s)\n")
    out.write(f"{len(descriptions)} host description(s) written to {args.output}\n")
    return EXIT_OK
