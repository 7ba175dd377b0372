"""nova-reshape-manage placement describe_hosts over the nova cell fixture, field by field."""

from __future__ import annotations

import os

import pytest

from nova_reshape.virt.host import load_host
from tests.fixtures import nova_db as fx
from tests.functional.nova_reshape.novadb.helpers import header, load_output, run


@pytest.fixture(scope="module")
def described(nova_db_url, tmp_path_factory):
    output = str(tmp_path_factory.mktemp("hosts"))
    before = fx.checksums(nova_db_url)
    code, out, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                         "--output", output)
    assert code == 0, err
    return {"dir": output, "out": out, "err": err, "docs": load_output(output),
            "before": before, "url": nova_db_url}


def node(described, host):
    (only,) = described["docs"][host]["nodes"]
    return only


def consumers(node_document):
    return {consumer["uuid"]: consumer for consumer in node_document.get("consumers", [])}


def test_one_file_per_host_and_nothing_for_deleted_computes(described):
    assert sorted(os.listdir(described["dir"])) == ["cmp-1.yaml", "cmp-2.yaml", "ironic-1.yaml"]
    assert "3 host description(s) written" in described["out"]


def test_the_nova_database_is_unchanged(described):
    assert fx.checksums(described["url"]) == described["before"]


def test_header_names_the_sources(described):
    lines = header(os.path.join(described["dir"], "cmp-1.yaml"))
    assert lines[0].startswith("# Host description of cmp-1, written by nova-reshape-manage")
    assert any("nova database" in line and "compute_nodes, services, instances" in line
               for line in lines)
    assert "password" not in "".join(lines)


def test_compute_node_identity_and_service(described):
    cmp1 = node(described, fx.CMP1)
    assert (cmp1["nodename"], cmp1["uuid"], cmp1["hypervisor_type"]) == (
        fx.CMP1_NODE, fx.CMP1_UUID, "QEMU")
    assert cmp1["disabled"] is False
    assert node(described, fx.CMP2)["disabled"] is True


def test_cpu_sets_and_numa_cells(described):
    cmp1 = node(described, fx.CMP1)
    assert cmp1["cpu_shared_set"] == "0-3,8-11"
    assert cmp1["cpu_dedicated_set"] == "4-7,12-15"
    assert cmp1["numa_cells"] == [
        {"id": 0, "cpus": "0-3", "pcpus": "4-7", "memory_mb": 65536, "huge_pages": {2048: 1024}},
        {"id": 1, "cpus": "8-11", "pcpus": "12-15", "memory_mb": 65536}]


def test_cells_from_before_pcpuset_are_all_shared_with_a_note(described):
    cmp2 = node(described, fx.CMP2)
    assert cmp2["cpu_shared_set"] == "0-7" and "cpu_dedicated_set" not in cmp2
    assert cmp2["numa_cells"] == [{"id": 0, "cpus": "0-7", "memory_mb": 32768}]
    notes = header(os.path.join(described["dir"], "cmp-2.yaml"))
    assert any("no separate dedicated CPUs" in line for line in notes)
    assert "cmp-2: cmp-2.example.org: nova recorded no separate dedicated CPUs" in \
        described["err"]


def test_pci_devices_live_rows_only(described):
    devices = {device["address"]: device for device in node(described, fx.CMP1)["pci_devices"]}
    assert sorted(devices) == sorted([fx.GPU_HELD, fx.GPU_FREE, fx.VF_HELD, fx.VF_FREE])
    assert devices[fx.GPU_HELD] == {"address": fx.GPU_HELD, "vendor_id": "10de",
                                    "product_id": "20b5", "type": "type-PCI"}
    assert devices[fx.VF_HELD] == {"address": fx.VF_HELD, "vendor_id": "8086",
                                   "product_id": "154c", "type": "type-VF",
                                   "parent": fx.VF_PARENT, "physical_network": "physnet1"}
    assert "physical_network" not in devices[fx.VF_FREE]
    assert "pci_devices" not in node(described, fx.CMP2)


def test_consumers_of_cmp1(described):
    found = consumers(node(described, fx.CMP1))
    assert list(found) == [fx.PINNED, fx.UNPINNED_VF, fx.SPREAD, fx.OLD_PINNED, fx.RESIZED]
    assert found[fx.PINNED] == {"uuid": fx.PINNED, "cpu_policy": "dedicated", "numa": [0],
                                "pci": [fx.GPU_HELD]}
    # its VF is a neutron SR-IOV port's (physical_network): not a Placement allocation
    assert found[fx.UNPINNED_VF] == {"uuid": fx.UNPINNED_VF}
    assert found[fx.SPREAD] == {"uuid": fx.SPREAD, "numa": [0, 1]}
    assert found[fx.OLD_PINNED] == {"uuid": fx.OLD_PINNED, "cpu_policy": "dedicated",
                                    "numa": [1]}
    assert found[fx.RESIZED] == {"uuid": fx.RESIZED}
    assert fx.DELETED_INSTANCE not in found


def test_resize_source_holds_a_migration_consumer(described):
    found = consumers(node(described, fx.CMP2))
    assert list(found) == [fx.PLAIN, fx.RESIZE_MIGRATION]
    assert found[fx.RESIZE_MIGRATION] == {"uuid": fx.RESIZE_MIGRATION, "kind": "migration",
                                          "instance": fx.RESIZED}
    assert fx.CONFIRMED_MIGRATION not in found


def test_ironic_node_is_marked_and_nothing_else(described):
    assert node(described, fx.IRONIC_HOST) == {
        "nodename": fx.IRONIC_NODE, "uuid": fx.IRONIC_UUID, "hypervisor_type": "ironic"}


def test_the_migration_loader_reads_what_was_described(described):
    cmp1 = load_host(os.path.join(described["dir"], "cmp-1.yaml"))
    cmp2 = load_host(os.path.join(described["dir"], "cmp-2.yaml"))
    (node1,), (node2,) = cmp1.nodes, cmp2.nodes
    assert (node1.disabled, node2.disabled) == (False, True)
    assert node1.cpu_dedicated_set and node1.cpu_shared_set
    policies = {consumer.uuid: consumer.cpu_policy for consumer in node1.consumers}
    assert policies[fx.PINNED] == policies[fx.OLD_PINNED] == "dedicated"
    assert policies[fx.UNPINNED_VF] == "shared"


def test_host_filter(nova_db_url, tmp_path):
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--host", fx.CMP2, "--output", str(tmp_path))
    assert code == 0, err
    assert os.listdir(tmp_path) == ["cmp-2.yaml"]
    assert [c["uuid"] for c in load_output(str(tmp_path))[fx.CMP2]["nodes"][0]["consumers"]] \
        == [fx.PLAIN, fx.RESIZE_MIGRATION]


def test_unknown_host_is_refused(nova_db_url, tmp_path):
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--host", "nowhere", "--output", str(tmp_path / "out"))
    assert code == 2
    assert err == ("nova-reshape-manage: error: no compute node of host nowhere in the "
                   "nova database\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("url", "code", "message"), [
    ("nonsense", 2, "nova database nonsense: not a database URL"),
    ("sqlite:////nonexistent/nova.sqlite", 2, "nova database sqlite:////nonexistent/nova.sqlite:"
                                              " the directory /nonexistent does not exist"),
    ("postgresql+psycopg://nova:secret@127.0.0.1:1/nova", 1,
     "nova database postgresql+psycopg://nova:***@127.0.0.1:1/nova: cannot connect"),
    ("mysql+pymysql://nova:secret@127.0.0.1:1/nova", 1,
     "nova database mysql+pymysql://nova:***@127.0.0.1:1/nova: cannot connect"),
])
def test_unusable_database_is_one_line(url, code, message, tmp_path):
    result, out, err = run("placement", "describe_hosts", "--nova-database", url,
                           "--output", str(tmp_path))
    assert result == code
    assert err.startswith(f"nova-reshape-manage: error: {message}")
    assert err.count("\n") == 1 and "secret" not in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_missing_table_is_one_line(tmp_path):
    url = f"sqlite:///{tmp_path}/cell.sqlite"
    fx.populate(url, skip=("migrations",))
    code, _, err = run("placement", "describe_hosts", "--nova-database", url,
                       "--output", str(tmp_path / "out"))
    assert code == 1
    assert err.startswith("nova-reshape-manage: error: nova database: ")
    assert err.rstrip("\n").endswith("no such table: migrations") and err.count("\n") == 1


def test_output_that_is_a_file_is_refused(nova_db_url, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--output", str(target))
    assert code == 2 and "not a directory" in err


def test_node_without_uuid_is_found_by_name(tmp_path):
    # compute_nodes.uuid is NULL in rows an old release wrote and nothing updated.
    url = f"sqlite:///{tmp_path}/cell.sqlite"
    content = fx.rows()
    content[fx.compute_nodes][1]["uuid"] = None
    fx.populate(url, content=content)
    code, _, err = run("placement", "describe_hosts", "--nova-database", url,
                       "--host", fx.CMP2, "--output", str(tmp_path / "out"))
    assert code == 0, err
    (cmp2,) = load_output(str(tmp_path / "out"))[fx.CMP2]["nodes"]
    assert "uuid" not in cmp2 and cmp2["nodename"] == fx.CMP2_NODE


def test_a_description_the_schema_refuses_is_not_written(nova_db_url, tmp_path, monkeypatch):
    from nova_reshape.hostfacts import describe

    real = describe.describe_host

    def broken(*args, **kwargs):
        description = real(*args, **kwargs)
        if description.host == fx.CMP2:  # not the first host: nothing may be written at all
            description.document["nodes"][0]["hypervisor_type"] = ""
        return description

    monkeypatch.setattr(describe, "describe_host", broken)
    code, out, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                         "--output", str(tmp_path))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "hypervisor_type" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []
