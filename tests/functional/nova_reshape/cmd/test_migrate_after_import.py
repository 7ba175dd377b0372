"""An FFU from Queens: ``placement-manage db import`` and ``db sync``, then the migration.

On every enabled engine: Placement's tables imported out of a Queens
nova_api and upgraded are what ``migrate_compute_inventory`` reads and
reshapes like any Placement database: a PCI device of cmp-1 becomes its
child provider and the allocations already there stay as they were.
"""

from __future__ import annotations

import io

import yaml

from nova_reshape.cmd import manage
from placement_wsgi.cmd import manage as placement_manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import nova_api_placement_db as nova_api
from tests.fixtures.config import make_conf
from tests.fixtures.empty_databases import empty_database
from tests.functional.nova_reshape import migrate_helpers as helpers


def test_imported_database_is_migrated(engine, tmp_path):
    host_file = tmp_path / "hosts" / "cmp-1.yaml"
    host_file.parent.mkdir()
    host_file.write_text(yaml.safe_dump({"version": 1, "host": "cmp-1", "nodes": [{
        "nodename": "cmp-1", "uuid": nova_api.CMP1_UUID, "pci_devices": [
            {"address": "0000:81:00.0", "vendor_id": "10de", "product_id": "20b5"}]}]}))
    with empty_database(engine, tmp_path) as source, \
            empty_database(engine, tmp_path) as target:
        conf = tmp_path / "placement.conf"
        conf.write_text(f"[placement_database]\nconnection = {target}\n")
        nova_api.populate(source)
        for argv in (["import", "--from", source], ["sync"]):
            assert placement_manage.main(["--config-file", str(conf), "db", *argv]) == 0
        out, err = io.StringIO(), io.StringIO()
        code = manage.main(["--config-file", str(conf), "placement",
                            "migrate_compute_inventory", "--host-file",
                            str(host_file.parent)], out=out, err=err)
        assert code == 0, out.getvalue() + err.getvalue()
        assert "cmp-1: updated" in out.getvalue()
        with PlacementDirect(make_conf(target)) as placement:
            tree = helpers.tree(placement, nova_api.CMP1_UUID)
            held = helpers.ok(placement.get(f"/allocations/{nova_api.INSTANCE_2}",
                                            microversion="1.28"))["allocations"]
    assert tree["cmp-1_0000:81:00.0"]["inventory"] == {"CUSTOM_PCI_10DE_20B5": 1}
    assert tree["cmp-1_0000:81:00.0"]["parent"] == "cmp-1"
    assert held == {nova_api.CMP1_UUID: {"generation": held[nova_api.CMP1_UUID]["generation"],
                                         "resources": {"VCPU": 4, "MEMORY_MB": 4096}}}
