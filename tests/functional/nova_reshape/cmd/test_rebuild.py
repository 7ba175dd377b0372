"""``placement rebuild``: an empty Placement database rebuilt from nova's, on every enabled engine.

The cloud is the fixtures' (tests/fixtures/nova_api_db.py ``nova_cloud()``:
cell1 with cmp-1, cmp-2 and an ironic node, cell2 with cmp-3). The
reference is what the migration tests produce from the same hosts: the
host files describe_hosts writes, given flat to a Placement database and
migrated with ``--host-file``. The rebuilt trees must equal it by provider
name; then nova's start-up (the migration's resource-tracker flow over the
same hosts) and heal_allocations must write nothing.
"""

from __future__ import annotations

import dataclasses
import pathlib

import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.compute import migrate
from nova_reshape.nova.conf.compute import load_nova_conf
from nova_reshape.virt.host import load_hosts
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.cmd.test_from_nova import run
from tests.functional.nova_reshape.cmd.test_nova_cells import PCI, flat

ROOTS = (fx.CMP1_UUID, fx.CMP2_UUID, fx.CMP3_UUID)
#: Every live instance of both cells.
INSTANCES = (fx.PINNED, fx.UNPINNED_VF, fx.SPREAD, fx.OLD_PINNED, fx.RESIZED, fx.PLAIN,
             fx.CMP3_GUEST)
#: The root classes whose totals a host description does not carry: the migration
#: keeps the flat root's (the test generator's, in the reference), the rebuild
#: takes them from nova's compute_nodes rows. VCPU and PCPU too on a node whose
#: description gives no CPU set.
HYPERVISOR_TOTALS = {"MEMORY_MB", "DISK_GB"}
CPU_CLASSES = {"VCPU", "PCPU"}


def empty_placement(engine, directory: pathlib.Path):
    """A fresh, synced, empty Placement database: its URL and a placement.conf naming it."""
    url = SERVERS.fresh_url(engine)
    with PlacementDirect(make_conf(url)):
        pass
    directory.mkdir(exist_ok=True)
    conf = directory / "placement.conf"
    helpers.generator.write_config(str(conf), url)
    return url, str(conf)


def rebuild(*argv):
    return run("placement", "rebuild", *argv)


def shape(trees, without_sets):
    """Trees by provider name without the root totals the reference invents
    (``without_sets``: the nodes whose description gives no CPU set)."""
    def invented(name, rc):
        return rc in HYPERVISOR_TOTALS or (name in without_sets and rc in CPU_CLASSES)

    return {name: {**data, "inventory": {
        rc: total for rc, total in data["inventory"].items()
        if not (data["parent"] is None and invented(name, rc))}}
        for name, data in trees.items()}


def without_cpu_sets(hosts_dir):
    return {node.nodename for host in load_hosts([str(hosts_dir)]) for node in host.nodes
            if not node.is_ironic and node.cpu_shared_set is None
            and node.cpu_dedicated_set is None}


def reference(engine, cloud, tmp_path):
    """The migration tests' result for the cloud: trees and allocations by name."""
    url, conf = flat(engine, cloud, tmp_path, "files")
    code, text, err = run("--config-file", conf, "placement", "migrate_compute_inventory",
                          "--nova-config", cloud.nova_conf(tmp_path / "c.conf", pci=PCI),
                          "--host-file", str(tmp_path / "files-hosts"))
    assert code == 0, text + err
    return helpers.named_state(url, ROOTS, INSTANCES)


def startup_writes_nothing(url, hosts_dir, nova_conf):
    """nova's start-up over the rebuilt trees (the migration's tracker flow): every node
    unchanged, no row touched. In-progress moves' consumers are left out of the hosts:
    their source allocations are not rebuilt (as nova's own rebuild loses them)."""
    hosts = [dataclasses.replace(host, nodes=tuple(
        dataclasses.replace(node, consumers=tuple(
            consumer for consumer in node.consumers if not consumer.is_migration))
        for node in host.nodes)) for host in load_hosts([str(hosts_dir)])]
    options = DriverOptions(nova_conf=load_nova_conf([nova_conf]))
    before = helpers.placement_rows(url)
    with PlacementDirect(make_conf(url)) as placement:
        results = migrate.Migration(placement, hosts, migrate.Settings(options=options)).run()
    assert sorted((r.nodename, r.status, r.writes) for r in results) == [
        ("bm-0001", "skipped", 0), ("cmp-1.example.org", "unchanged", 0),
        ("cmp-2.example.org", "unchanged", 0), ("cmp-3.example.org", "unchanged", 0)]
    assert helpers.placement_rows(url) == before


def put_hosts_in_aggregates(cloud):
    """cmp-1 and cmp-3 (two cells) in ``az1``, cmp-3 in ``fast`` too, beside the
    fixture's hosts cmp-a and cmp-b, which no cell has."""
    engine = sa.create_engine(cloud.api_url)
    try:
        with engine.begin() as connection:
            connection.execute(api_fx.aggregate_hosts.insert(), [
                {"id": 10, "aggregate_id": 1, "host": fx.CMP1},
                {"id": 11, "aggregate_id": 1, "host": fx.CMP3},
                {"id": 12, "aggregate_id": 2, "host": fx.CMP3}])
    finally:
        engine.dispose()


def aggregates_of(url, root):
    with PlacementDirect(make_conf(url)) as placement:
        return sorted(helpers.ok(placement.get(f"/resource_providers/{root}/aggregates",
                                               microversion="1.19"))["aggregates"])


def test_the_rebuilt_placement_is_the_migrated_one(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        put_hosts_in_aggregates(cloud)
        ref_trees, ref_allocations = reference(engine, cloud, tmp_path)
        url, conf = empty_placement(engine, tmp_path / "rebuilt")
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)
        before = fx.checksums(cloud.cells["cell1"])
        code, text, err = rebuild("--config-file", conf, "--nova-config", nova_conf)
        assert code == 0, text + err
        assert text.splitlines()[-2] == ("3 compute node tree(s) built for nova 2026.2 (2 "
                                         "reshaped by the migration), 7 instance(s) given "
                                         "allocations")
        assert err.count("note: not rebuilt") == 1 and "Neutron's agent providers" in err
        assert text.splitlines()[-1] == "3 provider aggregate membership(s) added"
        assert ("hosts in host aggregates without a host mapping in nova's API database "
                "(run 'nova-manage cell_v2 discover_hosts'): cmp-a, cmp-b") in err
        assert aggregates_of(url, fx.CMP1_UUID) == [api_fx.AZ1_UUID]
        assert aggregates_of(url, fx.CMP3_UUID) == sorted([api_fx.AZ1_UUID, api_fx.FAST_UUID])
        assert aggregates_of(url, fx.CMP2_UUID) == []
        trees, allocations = helpers.named_state(url, ROOTS, INSTANCES)
        sets_unknown = without_cpu_sets(tmp_path / "files-hosts")
        assert sets_unknown == {"cmp-3.example.org"}
        assert shape(trees, sets_unknown) == shape(ref_trees, sets_unknown)
        # The hypervisor's totals are nova's compute_nodes rows.
        assert trees["cmp-2.example.org"]["inventory"] == {
            "VCPU": 8, "MEMORY_MB": 32768, "DISK_GB": 1000}
        assert trees["cmp-3.example.org"]["inventory"] == {
            "VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 1000}
        assert trees["cmp-1.example.org"]["inventory"] == {
            "VCPU": 8, "PCPU": 8, "MEMORY_MB": 131072, "DISK_GB": 1000}
        # Each instance on the providers the migration moved it to, with its flavor's
        # amounts (volume-backed: no DISK_GB), where the reference holds the test
        # generator's flat amounts.
        for instance in (fx.PINNED, fx.SPREAD, fx.PLAIN, fx.CMP3_GUEST):
            assert set(allocations[instance]) == set(ref_allocations[instance])
        assert allocations[fx.PINNED] == {
            "cmp-1.example.org": {"PCPU": 4, "MEMORY_MB": 4096},
            "cmp-1.example.org_0000:D8:00.0": {"CUSTOM_PCI_10DE_20B5": 1}}
        assert allocations[fx.RESIZED] == {"cmp-1.example.org": {"VCPU": 4, "MEMORY_MB": 4096}}
        assert allocations[fx.CMP3_GUEST]["cmp-3.example.org_0000:AF:00.0"] == {
            "CUSTOM_PCI_10DE_20B5": 1}
        startup_writes_nothing(url, tmp_path / "files-hosts", nova_conf)
        code, text, err = run("--config-file", conf, "placement", "heal_allocations",
                              "--nova-config", nova_conf, "--heal-nested",
                              "--skip-port-allocations")
        assert code == 4, text + err
        rows = helpers.placement_rows(url)
        code, text, err = run("--config-file", conf, "placement", "sync_aggregates",
                              "--nova-config", nova_conf)
        assert code == 4 and text == "0 provider aggregate membership(s) added\n", text + err
        assert helpers.placement_rows(url) == rows
        assert fx.checksums(cloud.cells["cell1"]) == before


def test_a_placement_database_not_empty_is_refused(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, conf = empty_placement(engine, tmp_path / "p")
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)
        code, text, err = rebuild("--config-file", conf, "--nova-config", nova_conf)
        assert code == 0, text + err
        rows = helpers.placement_rows(url)
        code, text, err = rebuild("--config-file", conf, "--nova-config", nova_conf)
    assert code == manage.EXIT_REFUSED, text + err
    assert text == "" and err.count("\n") == 1
    assert "is not empty (it holds 6 resource providers, 7 consumers)" in err
    assert helpers.placement_rows(url) == rows


def test_a_placement_database_never_synced_is_refused_not_created(tmp_path):
    never_synced = tmp_path / "never.sqlite"
    never_synced.touch()
    missing = tmp_path / "missing" / "placement.sqlite"
    for url in (f"sqlite:///{never_synced}", f"sqlite:///{missing}"):
        conf = tmp_path / "placement.conf"
        helpers.generator.write_config(str(conf), url)
        code, text, err = rebuild("--config-file", str(conf), "--nova-api-database",
                                  f"sqlite:///{tmp_path}/nova_api.sqlite")
        assert code == manage.EXIT_BAD_INPUT, text + err
        assert err.count("\n") == 1 and text == "", err
    assert "placement-manage db sync" in err or "does not exist" in err
    assert never_synced.stat().st_size == 0 and not missing.parent.exists()


def test_garbage_nova_conf_and_no_api_database_are_one_line(tmp_path):
    garbage = tmp_path / "nova.conf"
    garbage.write_text("this is [not an ini\n\x00")
    code, text, err = rebuild("--nova-config", str(garbage))
    assert code == manage.EXIT_BAD_INPUT and err.count("\n") == 1, text + err
    assert str(garbage) in err
    empty = tmp_path / "empty.conf"
    empty.write_text("[DEFAULT]\n")
    code, text, err = rebuild("--nova-config", str(empty))
    assert code == manage.EXIT_BAD_INPUT and err.count("\n") == 1, text + err
    assert "no nova API database" in err


def test_one_cell_database_or_leaving_cells_out_is_refused(tmp_path):
    for option in (["--nova-database", "sqlite://"], ["--skip-unreachable-cells"]):
        code, text, err = rebuild(*option)
        assert code == manage.EXIT_BAD_INPUT and err.count("\n") == 1, text + err
        assert "rebuild reads every cell through nova's API database" in err


def test_cyborg_providers_are_built_from_its_database(engine, tmp_path):
    from tests.fixtures.cyborg_db import cyborg_database

    with api_fx.nova_cloud(engine) as cloud:
        cyborg = cyborg_database(engine)
        try:
            cyborg_url = next(cyborg)
            url, conf = empty_placement(engine, tmp_path / "p")
            code, text, err = rebuild("--config-file", conf, "--cyborg-database", cyborg_url,
                                      "--nova-config", cloud.nova_conf(tmp_path / "n.conf",
                                                                       pci=PCI))
        finally:
            cyborg.close()
        assert code == 0, text + err
        assert "Cyborg's bound accelerator requests" in err
        trees, allocations = helpers.named_state(url, ROOTS, INSTANCES)
    assert trees["cmp-1.example.org_0000:5e:00.0"]["inventory"] == {"FPGA": 2}
    assert trees["cmp-1.example.org_0000:5e:00.0"]["parent"] == "cmp-1.example.org"
    assert "OWNER_CYBORG" in trees["cmp-2.example.org_0000:af:00.0"]["traits"]
    # PINNED's bound FPGA request is Cyborg's: not healed (said once above).
    assert "FPGA" not in {rc for held in allocations[fx.PINNED].values() for rc in held}


def requests_path(monkeypatch):
    """The rebuild through Placement's requests (its path when the set-based one would
    stop somewhere), taken here for a cloud where it would not."""
    from nova_reshape.cmd import rebuild_bulk

    monkeypatch.setattr(rebuild_bulk, "decide", lambda *args: None)


def test_sigterm_while_healing_is_one_line_and_exit_143(tmp_path, monkeypatch):
    import os
    import signal

    from nova_reshape.consistency import heal as healing

    requests_path(monkeypatch)

    real_write = healing.placement_io.write

    def write_then_sigterm(placement, bodies, done=None):
        os.kill(os.getpid(), signal.SIGTERM)
        return real_write(placement, bodies, done)

    monkeypatch.setattr(healing.placement_io, "write", write_then_sigterm)
    with api_fx.nova_cloud("sqlite") as cloud:
        url, conf = empty_placement("sqlite", tmp_path / "p")
        code, text, err = rebuild("--config-file", conf, "--nova-config",
                                  cloud.nova_conf(tmp_path / "n.conf", pci=PCI))
    assert code == 143, text + err
    assert text == ""
    [line] = [line for line in err.splitlines() if "error:" in line]
    assert "interrupted by SIGTERM; the Placement database is partly rebuilt" in line
    assert err.count("\n") == 2  # the note said once, then the one line


def test_a_write_placement_refuses_is_one_line_and_exit_1(tmp_path, monkeypatch):
    from nova_reshape import exception
    from nova_reshape.compute import first_start

    requests_path(monkeypatch)

    def refused(placement, nodes, done=None):
        raise exception.ResourceProviderCreationFailed(name="cmp-1.example.org")

    monkeypatch.setattr(first_start, "create_roots", refused)
    with api_fx.nova_cloud("sqlite") as cloud:
        url, conf = empty_placement("sqlite", tmp_path / "p")
        code, text, err = rebuild("--config-file", conf, "--nova-config",
                                  cloud.nova_conf(tmp_path / "n.conf", pci=PCI))
    assert code == manage.EXIT_FAILED, text + err
    [line] = [line for line in err.splitlines() if "error:" in line]
    assert "cmp-1.example.org" in line and "partly rebuilt: empty it" in line
    assert "Traceback" not in err
