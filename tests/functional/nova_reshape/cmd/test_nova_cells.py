"""Every cell, from the operator's nova.conf and placement.conf alone, on every enabled engine.

An API database maps cell0, cell1 (cmp-1, cmp-2, ironic-1) and cell2 (cmp-3,
its URL a template nova fills from ``[database] connection``). Each test
runs the command as an operator would and asserts the resulting Placement
trees and allocations.
"""

from __future__ import annotations

import pytest

from nova_reshape.cmd import manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape import migrate_helpers as helpers
from tests.functional.nova_reshape.cmd.test_from_nova import flat_placement, run
from tests.functional.nova_reshape.novadb.helpers import header

ROOTS = (fx.CMP1_UUID, fx.CMP2_UUID, fx.CMP3_UUID)
CONSUMERS = (fx.PINNED, fx.SPREAD, fx.PLAIN, fx.CMP3_GUEST)
PCI = ('report_in_placement = True\n'
       'device_spec = {"vendor_id": "10de", "product_id": "20b5"}\n'
       'device_spec = {"vendor_id": "8086", "product_id": "154c", '
       '"physical_network": "physnet1"}')
CMP3_GPU_RP = "cmp-3.example.org_0000:AF:00.0"
CMP1_GPU_RP = "cmp-1.example.org_0000:D8:00.0"


def state(url):
    """Trees (by provider name) and each consumer's allocations (by provider name)."""
    return helpers.named_state(url, ROOTS, CONSUMERS)


def flat(engine, cloud, tmp_path, name):
    """Every host of the cloud described (describe_hosts over the API database) and
    written flat into a fresh Placement database: its URL and placement.conf."""
    documents = described_cloud(cloud, tmp_path / f"{name}-hosts")
    return flat_placement(engine, documents, tmp_path / name)


def described_cloud(cloud, directory):
    code, _, err = run("placement", "describe_hosts", "--nova-api-database", cloud.api_url,
                       "--nova-config", cloud.nova_conf(directory.parent / "describe.conf"),
                       "--output", str(directory))
    assert code == 0, err
    assert (f"#   cell cell2 ({api_fx.CELL2_UUID}), nova database "
            in "\n".join(header(str(directory / "cmp-3.yaml"))))
    return helpers.read_documents(directory)


def migrate(*argv):
    return run("placement", "migrate_compute_inventory", *argv)


#: engine -> the trees and allocations migrating describe_hosts' files leaves: the
#: reference of both parametrisations below, computed by whichever runs first.
_FROM_FILES: dict[str, tuple[dict, dict]] = {}


def from_host_files(engine, cloud, tmp_path, documents):
    """What ``--host-file`` over describe_hosts' files leaves (those ``documents``)."""
    if engine not in _FROM_FILES:
        files_url, files_conf = flat_placement(engine, documents, tmp_path / "files")
        code, text, err = migrate("--nova-config", cloud.nova_conf(tmp_path / "c.conf", pci=PCI),
                                  "--host-file", str(tmp_path / "hosts"),
                                  "--config-file", files_conf)
        assert code == 0, text + err
        _FROM_FILES[engine] = state(files_url)
    return _FROM_FILES[engine]


@pytest.mark.parametrize("placement_from", ["placement.conf", "nova.conf"])
def test_one_step_from_nova_conf_and_placement_conf(engine, tmp_path, placement_from):
    with api_fx.nova_cloud(engine) as cloud:
        documents = described_cloud(cloud, tmp_path / "hosts")
        # One fresh Placement database at a time (the servers reuse theirs per engine).
        from_files = from_host_files(engine, cloud, tmp_path, documents)
        url, placement_conf = flat_placement(engine, documents, tmp_path / "one-step")
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI, **(
            {"placement_database": f"connection = {url}"}
            if placement_from == "nova.conf" else {}))
        config = ["--config-file", placement_conf] if placement_from == "placement.conf" else []
        code, text, err = run(*config, "placement", "migrate_compute_inventory",
                              "--nova-config", nova_conf)
        assert code == 0, text + err
        assert "cmp-3.example.org: migrated" in text and "cmp-1.example.org: migrated" in text
        trees, allocations = state(url)
        assert (trees, allocations) == from_files
        assert trees[CMP3_GPU_RP]["inventory"]["CUSTOM_PCI_10DE_20B5"] == 1
        assert allocations[fx.CMP3_GUEST][CMP3_GPU_RP] == {"CUSTOM_PCI_10DE_20B5": 1}
        assert allocations[fx.PINNED][CMP1_GPU_RP] == {"CUSTOM_PCI_10DE_20B5": 1}
        code, text, err = run(*config, "placement", "migrate_compute_inventory",
                              "--nova-config", nova_conf)
        assert code == 0 and "1 skipped, 3 unchanged. Done." in text, text + err
        assert state(url) == (trees, allocations)


def test_cell_limits_the_run(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, placement_conf = flat(engine, cloud, tmp_path, "p")
        before = state(url)
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)
        code, text, err = migrate("--config-file", placement_conf, "--nova-config", nova_conf,
                                  "--cell", "cell2")
        assert code == 0, text + err
        assert "cmp-3.example.org: migrated" in text and "cmp-1.example.org" not in text
        trees, allocations = state(url)
    assert allocations[fx.CMP3_GUEST][CMP3_GPU_RP] == {"CUSTOM_PCI_10DE_20B5": 1}
    assert CMP1_GPU_RP not in trees
    assert allocations[fx.PINNED] == before[1][fx.PINNED]


def test_a_host_in_two_cells_is_refused(engine, tmp_path):
    with api_fx.nova_cloud(engine, cell2_rows=fx.second_cell_rows(host=fx.CMP1)) as cloud:
        url, placement_conf = flat_placement(engine, [], tmp_path / "p")
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)
        code, text, err = migrate("--config-file", placement_conf, "--nova-config", nova_conf)
    assert code == manage.EXIT_REFUSED, text + err
    assert err.count("\n") == 1 and text == ""
    assert (f"host {fx.CMP1} is in cell cell1 ({api_fx.CELL1_UUID}) and in cell cell2 "
            f"({api_fx.CELL2_UUID})") in err
    with PlacementDirect(make_conf(url)) as placement:
        assert helpers.ok(placement.get("/resource_providers"))["resource_providers"] == []


def test_an_unreachable_cell_stops_the_run_or_is_left_out(engine, tmp_path):
    missing = f"sqlite:///{tmp_path}/gone.sqlite"
    with api_fx.nova_cloud(engine, cell2_url=missing) as cloud:
        documents = described_files_of_cell1(cloud, tmp_path)
        url, placement_conf = flat_placement(engine, documents, tmp_path / "p")
        before = state_without_cmp3(url)
        nova_conf = cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)
        code, text, err = migrate("--config-file", placement_conf, "--nova-config", nova_conf)
        assert code == manage.EXIT_FAILED, text + err
        assert err.count("\n") == 1 and f"cell cell2 ({api_fx.CELL2_UUID})" in err
        assert state_without_cmp3(url) == before
        code, text, err = migrate("--config-file", placement_conf, "--nova-config", nova_conf,
                                  "--skip-unreachable-cells")
        assert code == 0, text + err
        assert f"cell left out, hosts left out: {fx.CMP3}" in err
        trees, allocations = state_without_cmp3(url)
    assert allocations[fx.PINNED][CMP1_GPU_RP] == {"CUSTOM_PCI_10DE_20B5": 1}
    assert "cmp-3.example.org" not in text


def described_files_of_cell1(cloud, tmp_path):
    directory = tmp_path / "hosts"
    code, _, err = run("placement", "describe_hosts", "--nova-database", cloud.cells["cell1"],
                       "--output", str(directory))
    assert code == 0, err
    return helpers.read_documents(directory)


def state_without_cmp3(url):
    return helpers.named_state(url, (fx.CMP1_UUID, fx.CMP2_UUID), (fx.PINNED,))


def test_per_host_nova_conf_directory(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, placement_conf = flat(engine, cloud, tmp_path, "p")
        confs = tmp_path / "nova-conf.d"
        confs.mkdir()
        # Multi-valued options (device_spec) add up over files, as for nova-compute:
        # the default file sets what all hosts share, each host file its devices.
        cloud.nova_conf(confs / "nova.conf", pci="report_in_placement = True")
        (confs / f"{fx.CMP1}.conf").write_text(f"[pci]\n{PCI.split(chr(10), 1)[1]}\n")
        (confs / f"{fx.CMP3}.conf").write_text(
            '[pci]\ndevice_spec = {"vendor_id": "10de", "product_id": "20b5", '
            '"resource_class": "CUSTOM_A100"}\n')
        code, text, err = migrate("--config-file", placement_conf, "--nova-config", str(confs))
        assert code == 0, text + err
        trees, allocations = state(url)
    assert allocations[fx.CMP3_GUEST][CMP3_GPU_RP] == {"CUSTOM_A100": 1}
    assert allocations[fx.PINNED][CMP1_GPU_RP] == {"CUSTOM_PCI_10DE_20B5": 1}


def test_no_database_anywhere_is_one_line(tmp_path):
    """Placement's database is checked first; with it in order, nova's is missing."""
    conf = tmp_path / "nova.conf"
    conf.write_text("[pci]\nreport_in_placement = True\n")
    code, text, err = migrate("--config-file", str(conf), "--nova-config", str(conf))
    assert code == manage.EXIT_BAD_INPUT, text + err
    assert err.count("\n") == 1 and "[placement_database] connection" in err
    _, placement_conf = flat_placement("sqlite", [], tmp_path / "placement")
    code, text, err = migrate("--config-file", placement_conf, "--nova-config", str(conf))
    assert code == manage.EXIT_BAD_INPUT, text + err
    assert err.count("\n") == 1 and "[api_database] connection" in err
