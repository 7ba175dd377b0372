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

import dataclasses
from typing import TextIO

from nova_reshape.cmd import output
from nova_reshape.cmd.refusal import ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import MigrateRequest, NovaDatabase, OutputFormat
from nova_reshape.compute.preflight import Finding
from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import conflicts, describe
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.novadb import cyborg, reader
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError, display_url
from nova_reshape.virt.host import Host, HostDescriptionError, parse_host


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
                                            collected.get(name), conf))
        hosts.append(parse_host(description.document, f"{where}, host {name}"))
        sources.update(description.sources)
    for name in describe.collected_without_nova(collected, snapshot):
        findings.append(Finding(conflicts.CODE, name, f"{collected[name].path}: host has "
                                "no compute node in nova's database"))
    return Described(hosts=hosts, sources=sources, findings=findings)


def read_described(source: NovaDatabase, conf: NovaConf | None) -> Described:
    """:func:`describe_all` of ``source``; what cannot be read raised as a :class:`Refusal`."""
    try:
        return describe_all(source.url, source.collected, source.cyborg_database, conf)
    except (BadDatabaseURL, DatabaseReadError) as error:
        raise database_refusal(error) from error
    except HostDescriptionError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error


def hosts_from_nova(request: MigrateRequest, source: NovaDatabase, conf: NovaConf | None,
                    out: TextIO) -> list[Host]:
    """The hosts ``source`` describes (with ``--dry-run`` in text, each node's facts
    and their sources printed first); a :class:`Refusal` when they cannot be read
    or their sources disagree (nothing is written)."""
    described = read_described(source, conf)
    if request.dry_run and request.output_format == OutputFormat.TEXT:
        output.write_sources(described.sources, out)
    if described.findings:
        raise Refusal(ExitClass.REFUSED, f"{len(described.findings)} conflict(s) between the "
                      "sources; nothing written", described.findings)
    return described.hosts
