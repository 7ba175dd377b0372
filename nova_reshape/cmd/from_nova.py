"""``migrate_compute_inventory --nova-database``: describe in memory, then migrate.

The hosts are described as ``describe_hosts`` would (same reader, same
document builder, same loader), but nothing is written: the documents go
straight to the migration. Where the sources disagree
(:mod:`nova_reshape.hostfacts.conflicts`) the run is refused before
Placement is read, one line per conflict. With ``--dry-run`` each node's
facts are listed with the sources they came from. See
docs/migrate-compute-inventory.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any, TextIO

from nova_reshape.cmd.describe import database_error
from nova_reshape.compute.preflight import Finding
from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import conflicts, describe
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.novadb import cyborg, reader
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError, display_url
from nova_reshape.virt.host import Host, parse_host

EXIT_REFUSED = 3


def add_arguments(parser: argparse.ArgumentParser, sources: Any) -> None:
    """The migration's options for describing in memory; ``sources`` is the group that
    makes ``--nova-database`` and ``--host-file`` exclusive."""
    sources.add_argument("--nova-database", metavar="URL",
                         help="describe the hosts from nova's cell database (read only) "
                         "instead of host files")
    parser.add_argument("--collected", metavar="DIR",
                        help="with --nova-database: files written by 'host collect'")
    parser.add_argument("--cyborg-database", metavar="URL",
                        help="with --nova-database: Cyborg's database (read only)")


@dataclasses.dataclass
class Described:
    """Hosts described in memory, and per node which source gave which fact."""

    hosts: list[Host]
    sources: dict[str, dict[str, list[str]]]
    findings: list[Finding]


def describe_all(nova_database: str, collected_dir: str | None, cyborg_database: str | None,
                 conf: NovaConf | None) -> Described:
    """Describe every compute host of the cell; raises what the readers raise."""
    collected = collected_mod.load_collected_dir(collected_dir) if collected_dir else {}
    snapshot = reader.read_cell(nova_database, [])
    accelerators = cyborg.read_cyborg(cyborg_database) if cyborg_database else None
    where = f"nova database {display_url(nova_database)}"
    hosts, sources, findings = [], {}, []
    for name in snapshot.hosts():
        description = describe.describe_host(snapshot, name, collected.get(name),
                                             accelerators, conf)
        findings.extend(Finding(conflicts.CODE, node, message) for node, message in
                        conflicts.conflicts(snapshot, name, description.document,
                                            collected.get(name)))
        hosts.append(parse_host(description.document, f"{where}, host {name}"))
        sources.update(description.sources)
    for name in describe.collected_without_nova(collected, snapshot):
        findings.append(Finding(conflicts.CODE, name, f"{collected[name].path}: host has "
                                "no compute node in nova's database"))
    return Described(hosts=hosts, sources=sources, findings=findings)


def hosts_from_nova(args: argparse.Namespace, conf: NovaConf | None, out: TextIO,
                    err: TextIO) -> list[Host] | int:
    """The described hosts, or the exit status when they cannot or must not be migrated."""
    try:
        described = describe_all(args.nova_database, args.collected, args.cyborg_database,
                                 conf)
    except (BadDatabaseURL, DatabaseReadError) as error:
        return database_error(error, err)
    if args.dry_run and args.format == "text":
        write_sources(described.sources, out)
    if described.findings:
        write_refusal(described.findings, args.dry_run, args.format, out)
        return EXIT_REFUSED
    return described.hosts


def write_refusal(findings: list[Finding], dry_run: bool, output_format: str,
                  out: TextIO) -> None:
    """The conflicts, one line each (text) or as the JSON report's findings."""
    if output_format == "json":
        json.dump({"dry_run": dry_run, "exit_code": EXIT_REFUSED,
                   "findings": [finding.as_dict() for finding in findings]}, out, indent=2)
        out.write("\n")
        return
    for finding in findings:
        out.write(f"{finding}\n")
    out.write(f"refused: {len(findings)} conflict(s) between the sources; nothing written\n")


def write_sources(sources: dict[str, dict[str, list[str]]], out: TextIO) -> None:
    """Per node, each fact and where it came from."""
    for nodename, facts in sources.items():
        out.write(f"{nodename}: facts from\n")
        for fact, names in facts.items():
            out.write(f"  {fact}: {', '.join(names)}\n")
