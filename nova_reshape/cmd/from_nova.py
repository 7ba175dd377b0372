"""``migrate_compute_inventory`` from nova's databases: describe in memory, then migrate.

The hosts of the cells :mod:`nova_reshape.cmd.nova_cells` read are
described as ``describe_hosts`` would (same reader, same
document builder, same loader), but nothing is written: the documents go
straight to the migration. Where the sources disagree
(:mod:`nova_reshape.hostfacts.conflicts`) the run is refused before
Placement is read, one line per conflict. With ``--dry-run`` each node's
facts are listed with the sources they came from. See
docs/migrate-compute-inventory.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TextIO

from nova_reshape.cmd import nova_cells, output
from nova_reshape.cmd.refusal import ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import MigrateRequest, NovaDatabase, OutputFormat
from nova_reshape.compute.preflight import Finding
from nova_reshape.hostfacts import collected as collected_mod
from nova_reshape.hostfacts import conflicts, describe
from nova_reshape.nova.conf.per_host import HostConfs, NovaConfigPaths, load_host_confs
from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb import cyborg
from nova_reshape.novadb.cells import CellsSnapshot
from nova_reshape.novadb.readonly import DatabaseReadError
from nova_reshape.virt import releases
from nova_reshape.virt.host import Host, HostDescriptionError, parse_host


@dataclasses.dataclass
class Described:
    """Hosts described in memory, and per node which source gave which fact."""

    hosts: list[Host]
    sources: dict[str, dict[str, list[str]]]
    findings: list[Finding]


def describe_all(snapshot: CellsSnapshot, collected_dir: str | None,
                 cyborg_database: str | None, confs: HostConfs) -> Described:
    """Describe every compute host of the cells read, each with its own nova.conf;
    raises what the readers raise."""
    collected = collected_mod.load_collected_dir(collected_dir) if collected_dir else {}
    accelerators = cyborg.read_cyborg(cyborg_database) if cyborg_database else None
    hosts, sources, findings = [], {}, []
    for read, name in snapshot.hosts():
        description = describe.describe_host(read.snapshot, name, collected.get(name),
                                             accelerators, confs.for_host(name))
        findings.extend(Finding(conflicts.CODE, node, message) for node, message in
                        conflicts.conflicts(read.snapshot, name, description.document,
                                            collected.get(name), confs.for_host(name)))
        hosts.append(parse_host(description.document,
                                f"{nova_cells.source_name(read)}, host {name}", built=True))
        sources.update(description.sources)
    known = snapshot.host_names() | snapshot.skipped_hosts()
    for name in describe.collected_without_nova(collected, known):
        findings.append(Finding(conflicts.CODE, name, f"{collected[name].path}: host has "
                                "no compute node in nova's database"))
    return Described(hosts=hosts, sources=sources, findings=findings)


def read_described(source: NovaDatabase, snapshot: CellsSnapshot,
                   confs: HostConfs) -> Described:
    """:func:`describe_all` of ``source``; what cannot be read raised as a :class:`Refusal`."""
    try:
        return describe_all(snapshot, source.collected, source.cyborg_database, confs)
    except DatabaseReadError as error:
        raise database_refusal(error) from error
    except HostDescriptionError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error


def hosts_from_nova(request: MigrateRequest, source: NovaDatabase, snapshot: CellsSnapshot,
                    confs: HostConfs, out: TextIO) -> list[Host]:
    """The hosts of ``snapshot`` (with ``--dry-run`` in text, each node's facts and
    their sources printed first); a :class:`Refusal` when they cannot be read or
    their sources disagree (nothing is written)."""
    described = read_described(source, snapshot, confs)
    if request.dry_run and request.output_format == OutputFormat.TEXT:
        output.write_sources(described.sources, out)
    if described.findings:
        raise Refusal(ExitClass.REFUSED, f"{len(described.findings)} conflict(s) between the "
                      "sources; nothing written", described.findings)
    return described.hosts


def host_confs(paths: NovaConfigPaths, hosts: Iterable[str]) -> HostConfs:
    """Each host's nova.conf (``--nova-config``); a refusal for an unreadable one."""
    try:
        return load_host_confs(paths, hosts)
    except NovaConfError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error


def driver_options(migrate_request: MigrateRequest, confs: HostConfs = HostConfs(),
                   hosts: Iterable[Host] = ()) -> releases.DriverOptions:
    """The shims' options, with the nova.conf common to every host and, per node of
    ``hosts`` whose host has its own, that one."""
    node_confs = {node.nodename: confs.by_host[host.host] for host in hosts
                  if host.host in confs.by_host for node in host.nodes}
    return releases.DriverOptions(target=migrate_request.target,
                                  numa_in_placement=migrate_request.numa_in_placement,
                                  allow_vgpu_mismatch=migrate_request.allow_vgpu_mismatch,
                                  nova_conf=confs.default, node_confs=node_confs)
