"""describe_hosts --nova-config: what only the hosts' nova.conf knows."""

from __future__ import annotations

import pytest

from tests.fixtures import hypervisor as hv
from tests.fixtures import nova_db as fx
from tests.functional.nova_reshape.novadb.helpers import collect, header, load_output, run

NOVA_CONF = """\
[pci]
report_in_placement = True
device_spec = {"vendor_id": "10de", "product_id": "20b5", "resource_class": "CUSTOM_A100", "traits": "gold,fast"}
device_spec = {"vendor_id": "8086", "product_id": "154c", "physical_network": "physnet2"}

[compute]
cpu_shared_set = 0-3
cpu_dedicated_set = 4-7

[devices]
enabled_mdev_types = nvidia-36
"""  # noqa: E501 (nova.conf lines as an operator writes them)


@pytest.fixture(scope="module")
def described(nova_db_url, tmp_path_factory):
    root = tmp_path_factory.mktemp("conf")
    conf = root / "nova.conf"
    conf.write_text(NOVA_CONF)
    collected = collect(root, fx.CMP1)
    output = root / "hosts"
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--collected", str(collected), "--nova-config", str(conf),
                       "--output", str(output))
    assert code == 0, err
    return {"docs": load_output(str(output)), "dir": output, "conf": str(conf)}


def nodes(described, host):
    (only,) = described["docs"][host]["nodes"]
    return only


def test_device_spec_tags_are_added_to_matching_devices(described):
    devices = {device["address"]: device for device in nodes(described, fx.CMP1)["pci_devices"]}
    assert devices[fx.GPU_HELD]["resource_class"] == "CUSTOM_A100"
    assert devices[fx.GPU_HELD]["traits"] == ["gold", "fast"]
    assert "physical_network" not in devices[fx.GPU_HELD]
    # nova's database knows the held VF's network from its port: that one is kept
    assert devices[fx.VF_HELD]["physical_network"] == "physnet1"
    assert devices[fx.VF_FREE]["physical_network"] == "physnet2"


def test_enabled_mdev_types_decides_an_idle_gpu_with_two_types(described):
    gpus = {gpu["address"]: gpu for gpu in nodes(described, fx.CMP1)["gpus"]}
    assert gpus[hv.GPU_IDLE_TWO_TYPES] == {"address": hv.GPU_IDLE_TWO_TYPES,
                                           "mdev_types": ["nvidia-36"], "capacity": 4}


def test_cpu_sets_come_from_nova_conf_only_where_the_database_has_none(described):
    cmp1, cmp2 = nodes(described, fx.CMP1), nodes(described, fx.CMP2)
    # cmp-1's cells record both sets: nova's database wins
    assert (cmp1["cpu_shared_set"], cmp1["cpu_dedicated_set"]) == ("0-3,8-11", "4-7,12-15")
    # cmp-2's cells are from before pcpuset: nova.conf splits them
    assert (cmp2["cpu_shared_set"], cmp2["cpu_dedicated_set"]) == ("0-3", "4-7")
    assert not any("no separate dedicated CPUs" in line
                   for line in header(str(described["dir"] / "cmp-2.yaml")))


def test_the_header_names_the_nova_conf(described):
    assert any(described["conf"] in line
               for line in header(str(described["dir"] / "cmp-1.yaml")))


def test_a_bad_nova_conf_is_one_line_and_nothing_is_written(nova_db_url, tmp_path):
    conf = tmp_path / "nova.conf"
    conf.write_text("[compute]\ncpu_dedicated_set = 4-x\n")
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--nova-config", str(conf), "--output", str(tmp_path / "out"))
    assert code == 2
    assert err.count("\n") == 1 and "cpu_dedicated_set" in err
    assert not (tmp_path / "out").exists()
