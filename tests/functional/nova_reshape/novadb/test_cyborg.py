"""Cyborg's database: accelerators per host and what instances hold, read-only."""

from __future__ import annotations

import os

import pytest

from nova_reshape.novadb import cyborg
from nova_reshape.novadb.readonly import DatabaseReadError
from tests.fixtures import cyborg_db as cx
from tests.fixtures import nova_db as fx
from tests.functional.nova_reshape.novadb.helpers import load_output, run


def test_read_cyborg(cyborg_db_url):
    before = cx.checksums(cyborg_db_url)
    snapshot = cyborg.read_cyborg(cyborg_db_url)
    assert cx.checksums(cyborg_db_url) == before
    (fpga,) = snapshot.accelerators_of(fx.CMP1_NODE)
    assert fpga == cyborg.AcceleratorRecord(
        name=cx.FPGA_NAME, uuid=fpga.uuid, hostname=fx.CMP1_NODE, device_type="FPGA",
        capacity=2, rp_uuid=cx.provider_uuid(cx.FPGA_NAME), resource_class="FPGA",
        traits=("CUSTOM_FPGA_INTEL_PAC_ARRIA10", "CUSTOM_PROGRAMMABLE"),
        # two attach handles: the device's control path address is the card's
        address=cx.FPGA_ADDRESS, vendor_id="8086", product_id="09c4")
    (gpu,) = snapshot.accelerators_of(fx.CMP2_NODE)  # the empty deployable is left out
    assert (gpu.name, gpu.address, gpu.capacity, gpu.vendor_id, gpu.product_id) == (
        cx.GPU_NAME, cx.GPU_ADDRESS, 1, "10de", "1eb8")
    assert snapshot.held_by(fx.PINNED) == {cx.FPGA_NAME: 1}
    assert snapshot.held_by(cx.UNBOUND_INSTANCE) == {}


def test_missing_cyborg_table_is_one_line(tmp_path):
    url = f"sqlite:///{tmp_path}/cyborg.sqlite"
    fx.populate(url)  # a nova database is not a Cyborg one
    with pytest.raises(DatabaseReadError, match="cyborg database: .*no such table: attributes"):
        cyborg.read_cyborg(url)


@pytest.fixture(scope="module")
def described(nova_db_url, cyborg_db_url, tmp_path_factory):
    output = str(tmp_path_factory.mktemp("hosts"))
    before = cx.checksums(cyborg_db_url)
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--cyborg-database", cyborg_db_url, "--output", output)
    assert code == 0, err
    assert cx.checksums(cyborg_db_url) == before
    return output


def test_describe_hosts_with_cyborg(described):
    docs = load_output(described)
    (cmp1,) = docs[fx.CMP1]["nodes"]
    assert cmp1["accelerators"] == [{
        "name": cx.FPGA_NAME, "type": "FPGA", "address": cx.FPGA_ADDRESS, "vendor_id": "8086",
        "product_id": "09c4", "resource_class": "FPGA", "capacity": 2,
        "traits": ["CUSTOM_FPGA_INTEL_PAC_ARRIA10", "CUSTOM_PROGRAMMABLE"]}]
    consumers = {consumer["uuid"]: consumer for consumer in cmp1["consumers"]}
    assert consumers[fx.PINNED]["accelerators"] == [{"device": cx.FPGA_NAME, "count": 1}]
    assert "accelerators" not in consumers[fx.SPREAD]
    (cmp2,) = docs[fx.CMP2]["nodes"]
    assert [item["name"] for item in cmp2["accelerators"]] == [cx.GPU_NAME]
    assert "accelerators" not in docs[fx.IRONIC_HOST]["nodes"][0]
    with open(os.path.join(described, "cmp-1.yaml"), encoding="utf-8") as stream:
        assert "cyborg database" in stream.read().split("version:")[0]


def test_unreachable_cyborg_database(nova_db_url, tmp_path):
    code, _, err = run("placement", "describe_hosts", "--nova-database", nova_db_url,
                       "--cyborg-database", "postgresql+psycopg://c:pw@127.0.0.1:1/cyborg",
                       "--output", str(tmp_path / "out"))
    assert code == 1
    assert err.startswith("nova-reshape-manage: error: cyborg database "
                          "postgresql+psycopg://c:***@127.0.0.1:1/cyborg: cannot connect")
    assert not (tmp_path / "out").exists()
