"""``migrate_compute_inventory --nova-database``: describe in memory and migrate in one step.

On every enabled engine (nova's cell database and Placement's on the same
engine): the one-step run leaves the same trees and allocations as
describe_hosts' files given to ``--host-file`` over the same flat data;
conflicts between the sources refuse the run, one line each, nothing
written; the dry run lists which source gave which fact.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from nova_reshape.cmd import manage
from nova_reshape.compute import findings
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.fixtures.databases import SERVERS
from tests.functional.nova_reshape import migrate_helpers as helpers

ROOTS = (fx.CMP1_UUID, fx.CMP2_UUID, fx.IRONIC_UUID)


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def nova_cell(engine, **populate_args):
    cell = fx.nova_cell(engine, **populate_args)
    try:
        yield next(cell)
    finally:
        cell.close()


def described(nova_url, directory):
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_url,
                       "--output", str(directory))
    assert code == 0, err
    return helpers.read_documents(directory)


def flat_placement(engine, documents, directory):
    """A fresh Placement database holding ``documents`` in the flat shape; its config."""
    url = SERVERS.fresh_url(engine)
    with PlacementDirect(make_conf(url)) as placement:
        for document in documents:
            helpers.generator.write_described(placement, document)
    directory.mkdir(exist_ok=True)
    conf = directory / "placement.conf"
    helpers.generator.write_config(str(conf), url)
    return url, str(conf)


def state(url, consumers):
    """Trees (by provider name) and each consumer's allocations (by provider name)."""
    return helpers.named_state(url, ROOTS, consumers)


def consumers_of(documents):
    return sorted({consumer["uuid"] for document in documents for node in document["nodes"]
                   for consumer in node.get("consumers", [])})


def test_one_step_equals_host_files(engine, tmp_path):
    with nova_cell(engine) as nova_url:
        documents = described(nova_url, tmp_path / "hosts")
        before = fx.checksums(nova_url)
        consumers = consumers_of(documents)
        # One fresh Placement database at a time (the servers reuse theirs per engine).
        files_url, files_conf = flat_placement(engine, documents, tmp_path / "a")
        code, text, err = run("--config-file", files_conf, "placement",
                              "migrate_compute_inventory", "--host-file",
                              str(tmp_path / "hosts"))
        assert code == 0, text + err
        from_files = state(files_url, consumers)
        nova_placement_url, nova_conf = flat_placement(engine, documents, tmp_path / "b")
        code, text, err = run("--config-file", nova_conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url)
        assert code == 0, text + err
        assert "cmp-1.example.org: migrated" in text and "bm-0001: skipped" in text
        from_nova = state(nova_placement_url, consumers)
        assert from_nova == from_files
        trees, allocations = from_nova
        assert trees["cmp-1.example.org"]["inventory"]["PCPU"] == 8
        assert allocations[fx.PINNED]["cmp-1.example.org"]["PCPU"] == 2
        assert allocations[fx.PINNED]["cmp-1.example.org_0000:D8:00.0"] == {
            "CUSTOM_PCI_10DE_20B5": 1}
        code, text, err = run("--config-file", nova_conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url)
        assert code == 0, text + err
        assert "1 skipped, 2 unchanged. Done." in text
        assert state(nova_placement_url, consumers) == from_nova
        assert fx.checksums(nova_url) == before


def test_dry_run_lists_the_source_of_every_fact(engine, tmp_path):
    with nova_cell(engine) as nova_url:
        dry_run_sources(engine, nova_url, tmp_path)


def dry_run_sources(engine, nova_db_url, tmp_path):
    documents = described(nova_db_url, tmp_path / "hosts")
    conf_file = tmp_path / "nova.conf"
    conf_file.write_text('[pci]\nreport_in_placement = True\n'
                         'device_spec = {"vendor_id": "10de", "product_id": "20b5"}\n'
                         'device_spec = {"vendor_id": "8086", "product_id": "154c", '
                         '"physical_network": "physnet1"}\n')
    _, conf = flat_placement(engine, documents, tmp_path)
    code, text, err = run("--config-file", conf, "placement", "migrate_compute_inventory",
                          "--nova-database", nova_db_url, "--nova-config", str(conf_file),
                          "--dry-run")
    assert code == 0, text + err
    facts = text.split("cmp-2.example.org: facts from")[0]
    assert "cmp-1.example.org: facts from\n  uuid: nova DB\n" in facts
    assert "  pci_devices: nova DB, nova.conf\n" in facts
    assert f"  consumer {fx.PINNED}: nova DB\n" in facts
    assert "Dry run: nothing changed." in text


def _with(content_changes):
    content = fx.rows()
    for table, extra in content_changes.items():
        content[table] = [*content[table], *extra]
    return content


PINNED_ON_CMP2 = "10000000-0000-4000-8000-000000000099"
VGPU_GUEST = "10000000-0000-4000-8000-000000000098"


@pytest.mark.parametrize("case", ["pinned_without_dedicated_set", "vgpu_without_mdev"])
def test_conflicts_between_sources_refuse_one_line_each(engine, tmp_path, case):
    if case == "pinned_without_dedicated_set":
        uuid, host, node, flavor = PINNED_ON_CMP2, fx.CMP2, fx.CMP2_NODE, fx.flavor(
            "p2", 2, 2048, **{"hw:cpu_policy": "dedicated"})
        expected = (f"cmp-2.example.org: [source_conflict] pinned guest(s) {uuid} but "
                    "neither nova's database nor nova.conf gives the host a dedicated CPU set")
    else:
        uuid, host, node, flavor = VGPU_GUEST, fx.CMP1, fx.CMP1_NODE, fx.flavor(
            "vgpu", 2, 2048, **{"resources:VGPU": "1"})
        expected = (f"cmp-1.example.org: [source_conflict] instance {uuid} asks "
                    "resources:VGPU but no collected file of the host (host collect) gives "
                    "it no mediated device")
    content = _with({fx.instances: [fx.instance_row(50, uuid, host, node, 2, 2048)],
                     fx.instance_extra: [fx.extra_row(50, uuid, fx.flavor_info(flavor))]})
    with nova_cell(engine, content=content) as nova_url:
        url, conf = flat_placement(engine, [], tmp_path)
        code, text, err = run("--config-file", conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url)
        _, json_text, _ = run("--config-file", conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url,
                              "--format", "json", "--dry-run")
    assert code == manage.EXIT_REFUSED, text + err
    lines = text.splitlines()
    assert [line for line in lines if "[source_conflict]" in line] == [
        line for line in lines if line.startswith(expected)]
    assert len(lines) == 2 and lines[-1].startswith("refused: 1 conflict(s)")
    with PlacementDirect(make_conf(url)) as placement:
        assert helpers.ok(placement.get("/resource_providers"))["resource_providers"] == []
    report = json.loads(json_text)
    assert report["exit_code"] == manage.EXIT_REFUSED and report["dry_run"]
    assert [finding["code"] for finding in report["findings"]] == ["source_conflict"]
    assert expected.split("] ", 1)[1] in report["findings"][0]["message"]


def test_host_file_and_nova_database_are_exclusive(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        run("placement", "migrate_compute_inventory", "--host-file", str(tmp_path),
            "--nova-database", "sqlite://")
    assert exited.value.code == manage.EXIT_BAD_INPUT
    assert "not allowed with argument --host-file" in capsys.readouterr().err


def test_a_missing_nova_database_is_one_line(tmp_path):
    code, text, err = run("placement", "migrate_compute_inventory", "--nova-database",
                          f"sqlite:///{tmp_path}/missing/nova.sqlite",
                          "--placement-url", "http://127.0.0.1:9/placement")
    assert code == manage.EXIT_BAD_INPUT, text + err
    assert err.count("\n") == 1 and f"the directory {tmp_path}/missing does not exist" in err
    assert not (tmp_path / "missing").exists()


def test_collected_facts_nova_does_not_know_refuse(engine, tmp_path):
    from tests.fixtures import hypervisor as hv
    from tests.functional.nova_reshape.novadb.helpers import collect

    collected = collect(tmp_path, fx.CMP1)
    with nova_cell(engine) as nova_url:
        _, conf = flat_placement(engine, [], tmp_path / "placement")
        code, text, err = run("--config-file", conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url,
                              "--collected", str(collected))
    assert code == manage.EXIT_REFUSED, text + err
    conflicts = [line for line in text.splitlines() if "[source_conflict]" in line]
    assert len(conflicts) == 2
    assert f"host collect could not read everything: domain {hv.GHOST_DOMAIN} uses" \
        in conflicts[1]
    assert "broken.xml: not a domain definition" in conflicts[0]
    assert all(line.startswith("cmp-1.example.org: ") for line in conflicts)
    assert text.splitlines()[-1] == (f"refused: {len(conflicts)} conflict(s) between the "
                                     "sources; nothing written")


def test_collected_devices_that_contradict_nova_refuse(engine, tmp_path):
    from nova_reshape.hostfacts import collected

    ghost = "60000000-0000-4000-8000-0000000000ff"
    mdev = "50000000-0000-4000-8000-0000000000ff"
    host = collected.CollectedHost(
        host=fx.CMP1, gpus=(collected.CollectedGpu(fx.GPU_HELD, {"nvidia-35": 2}),),
        mdevs=(collected.CollectedMdev(mdev, fx.GPU_HELD, "nvidia-35", ghost),))
    (tmp_path / "collected").mkdir()
    path = tmp_path / "collected" / "cmp-1.yaml"
    path.write_text(collected.dump(host))
    with nova_cell(engine) as nova_url:
        _, conf = flat_placement(engine, [], tmp_path / "placement")
        code, text, err = run("--config-file", conf, "placement",
                              "migrate_compute_inventory", "--nova-database", nova_url,
                              "--collected", str(tmp_path / "collected"))
    assert code == manage.EXIT_REFUSED, text + err
    assert text.splitlines()[:2] == [
        f"cmp-1.example.org: [source_conflict] PCI device {fx.GPU_HELD} is a type-PCI "
        f"passthrough device in nova's database but a GPU for mediated devices in {path}. "
        f"Fix: {FIX}.",
        f"cmp-1.example.org: [source_conflict] {path}: domain {ghost} holds mediated device "
        f"{mdev} but nova has no instance of that uuid on this node. Fix: {FIX}."]


FIX = findings.FAILURE_CLASSES["source_conflict"][1]
