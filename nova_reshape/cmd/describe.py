"""``nova-reshape-manage placement describe_hosts``: host description files from nova's databases.

::

    nova-reshape-manage placement describe_hosts
        [--nova-database URL | --nova-api-database URL] [--cell NAME|UUID]...
        [--skip-unreachable-cells] [--host NAME]... [--collected DIR]
        [--cyborg-database URL] [--nova-config PATH]... --output DIR

Reads nova's databases (one cell, or every cell nova's API database maps:
:mod:`nova_reshape.cmd.nova_cells`) and Cyborg's read-only and writes one
host description per service host to ``DIR/<host>.yaml``, merging what
``host collect`` found on each hypervisor and what each host's nova.conf
says. See docs/describe-hosts.md.

Exit status: 0 written; 1 a database could not be read; 2 bad input (URL,
``--cell``, unknown host, unreadable collected file or nova.conf, output
directory); 3 two cells claim the same host or compute node.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any, TextIO

from nova_reshape.cmd import nova_cells
from nova_reshape.cmd.refusal import EXIT_OK, PROGRAM, ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import NOVA_CONFIG_HELP, NovaDatabase, add_nova_arguments
from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import describe, output
from nova_reshape.nova.conf.per_host import NovaConfigPaths, load_host_confs
from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb import cyborg
from nova_reshape.novadb.cells import CellsSnapshot
from nova_reshape.novadb.readonly import DatabaseReadError, display_url
from nova_reshape.virt.host import HostDescriptionError, parse_host


@dataclasses.dataclass(frozen=True)
class DescribeRequest:
    """One ``describe_hosts`` invocation, as the operator asked it."""

    source: NovaDatabase
    output: str
    hosts: tuple[str, ...] = ()
    nova_configs: NovaConfigPaths = NovaConfigPaths()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DescribeRequest:
        return cls(source=NovaDatabase.from_args(args), output=args.output,
                   hosts=tuple(args.hosts), nova_configs=NovaConfigPaths(tuple(args.nova_configs)))


def add_parser(actions: Any) -> None:
    """Register ``placement describe_hosts`` under the placement category's actions."""
    parser = actions.add_parser(
        "describe_hosts", help="write host description files from nova's databases")
    add_nova_arguments(parser, parser.add_mutually_exclusive_group())
    parser.add_argument("--host", action="append", metavar="NAME", dest="hosts", default=[],
                        help="describe only this service host; repeatable (default: all)")
    parser.add_argument("--nova-config", action="append", metavar="PATH", dest="nova_configs",
                        default=[], help=NOVA_CONFIG_HELP + ": PCI device_spec tags, "
                        "enabled_mdev_types, CPU sets nova's database lacks; the database "
                        "connections")
    parser.add_argument("--output", metavar="DIR", required=True,
                        help="directory to write <host>.yaml files into (created if missing)")
    parser.set_defaults(run=lambda args, out, err: describe_hosts(
        DescribeRequest.from_args(args), out, err), verbose=False)


def describe_hosts(request: DescribeRequest, out: TextIO, err: TextIO) -> int:
    """The command; what cannot be read or written raised as a :class:`Refusal`."""
    try:
        return _describe_hosts(request, out, err)
    except DatabaseReadError as error:
        raise database_refusal(error) from error
    except (HostDescriptionError, NovaConfError) as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error
    except OSError as error:
        raise Refusal(ExitClass.BAD_INPUT, f"{error.filename or request.output}: "
                      f"{error.strerror or error}") from error


def _read(request: DescribeRequest, err: TextIO) -> CellsSnapshot:
    if os.path.exists(request.output) and not os.path.isdir(request.output):
        raise Refusal(ExitClass.BAD_INPUT, f"--output {request.output}: not a directory")
    snapshot = nova_cells.read_nova_hosts(request.source, request.nova_configs, request.hosts)
    nova_cells.write_skipped(snapshot, err)
    missing = describe.unknown_hosts(request.hosts, snapshot.host_names())
    if missing:
        raise Refusal(ExitClass.BAD_INPUT, f"no compute node of host {', '.join(missing)} "
                      "in the nova database")
    return snapshot


def _describe_hosts(request: DescribeRequest, out: TextIO, err: TextIO) -> int:
    snapshot = _read(request, err)
    source = request.source
    confs = load_host_confs(request.nova_configs, snapshot.host_names())
    collected = collected_mod.load_collected_dir(source.collected) if source.collected else {}
    accelerators = cyborg.read_cyborg(source.cyborg_database) if source.cyborg_database \
        else None
    known = snapshot.host_names() | snapshot.skipped_hosts()
    for host in describe.collected_without_nova(collected, known):
        if not request.hosts:
            err.write(f"{PROGRAM}: warning: {collected[host].path}: host {host} has no "
                      "compute node in the nova database; not used\n")
    os.makedirs(request.output, exist_ok=True)
    described = [(read, describe.describe_host(read.snapshot, host, collected.get(host),
                                               accelerators, confs.for_host(host)))
                 for read, host in snapshot.hosts()]
    # What the migration would refuse is refused here, before any file is written.
    for _, description in described:
        parse_host(description.document,
                   os.path.join(request.output, output.file_name(description.host)))
    for read, description in described:
        sources = [f"{nova_cells.source_name(read)}: compute_nodes, services, instances, "
                   "instance_extra, pci_devices, migrations"]
        if description.host in collected:
            sources.append(f"host collect: {collected[description.host].path}")
        conf_files = request.nova_configs.for_host(description.host)
        if conf_files:
            sources.append(f"nova.conf: {', '.join(conf_files)}")
        if source.cyborg_database:
            sources.append(f"cyborg database {display_url(source.cyborg_database)}")
        comment = output.header(
            f"Host description of {description.host}, written by {PROGRAM} placement "
            "describe_hosts (docs/describe-hosts.md)", sources, description.notes)
        path = os.path.join(request.output, output.file_name(description.host))
        output.write_atomically(path, output.render(description.document, comment))
        for note in description.notes:
            err.write(f"{PROGRAM}: note: {description.host}: {note}\n")
        out.write(f"{path}: {len(description.document['nodes'])} node(s)\n")
    out.write(f"{len(described)} host description(s) written to {request.output}\n")
    return EXIT_OK
