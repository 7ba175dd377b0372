"""``migrate_compute_inventory``'s consistency check, on every enabled engine.

The cloud is nova_api_db's (cell1: cmp-1, cmp-2, ironic-1; cell2: cmp-3),
described and written flat into Placement as the other migration tests
do, then damaged: an orphaned allocation (a consumer nova does not know)
or an instance whose allocations are gone. A damage on a node the run
migrates refuses it (exit 3, one line with the fixing command, nothing
written, dry run too); the command given fixes it; a damage elsewhere does
not refuse; ``--no-consistency-check`` goes on; host files without a nova
database say once that the check did not run.
"""

from __future__ import annotations

import json
import shlex

from placement_wsgi.direct import PlacementDirect
from tests.fixtures import consistency as cfx
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape.cmd.test_from_nova import run
from tests.functional.nova_reshape.cmd.test_nova_cells import PCI, flat

GHOST = cfx.GHOST
AUDIT_FIX = f"nova-reshape-manage placement audit --delete --resource_provider {fx.CMP1_UUID}"
HEAL_FIX = f"nova-reshape-manage placement heal_allocations --instance {fx.PLAIN}"


def orphan_on(url, provider, consumer=GHOST):
    with PlacementDirect(make_conf(url)) as placement:
        cfx.ok(placement.put(f"/allocations/{consumer}", microversion="1.28", json={
            "allocations": {provider: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}},
            "project_id": cfx.PROJECT, "user_id": cfx.USER, "consumer_generation": None}))


def allocations_gone(url, consumer):
    with PlacementDirect(make_conf(url)) as placement:
        response = placement.delete(f"/allocations/{consumer}")
        assert response.status_code == 204, response.text


def setup(engine, cloud, tmp_path):
    """The flat Placement of the whole cloud: its URL and the command's inputs."""
    url, conf = flat(engine, cloud, tmp_path, "placement")
    inputs = ["--config-file", conf,
              "--nova-config", cloud.nova_conf(tmp_path / "nova.conf", pci=PCI)]
    return url, inputs


def migrate(inputs, *argv):
    return run("placement", "migrate_compute_inventory", *inputs, *argv)


def fix(command, inputs):
    """The finding's command, with the run's inputs, as the operator runs it."""
    words = shlex.split(command)
    assert words[:2] == ["nova-reshape-manage", "placement"]
    return run("placement", *words[2:], *inputs)


def findings(text, code):
    return [line for line in text.splitlines() if f": [{code}] " in line]


def test_an_orphan_on_a_migrated_node_refuses_and_audit_fixes_it(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP1_UUID)
        before = cfx.rows_digest(url)
        for dry_run in ([], ["--dry-run"]):
            code, text, err = migrate(inputs, *dry_run)
            assert code == 3, text + err
            assert cfx.rows_digest(url) == before  # nothing written
            [line] = findings(text, "orphaned_allocation")
            assert line.startswith("cmp-1.example.org: [orphaned_allocation] allocation "
                                   "MEMORY_MB=512, VCPU=1 of a consumer that is neither an "
                                   "instance of this node nor a migration in progress there")
            assert f"(consumer {GHOST}, provider {fx.CMP1_UUID})" in line
            assert line.endswith(f": {AUDIT_FIX}")
            assert text.splitlines()[-1].startswith("refused: 1 allocation problem(s) on the "
                                                    "nodes to migrate")
        code, document, _ = migrate(inputs, "--format", "json")
        [finding] = json.loads(document)["findings"]
        assert (code, finding["code"], finding["command"]) == (3, "orphaned_allocation",
                                                               AUDIT_FIX)
        code, text, err = fix(AUDIT_FIX, inputs)
        assert code == 4, text + err  # nova's "found and deleted"
        code, text, err = migrate(inputs)
        assert code == 0, text + err
        assert "cmp-1.example.org: migrated" in text


def test_one_cell_database_alone(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP1_UUID)
        orphan_on(url, fx.CMP3_UUID, fx.DELETED_INSTANCE)  # cell2: not this run's
        code, text, err = migrate(inputs[:2], "--nova-database", cloud.cells["cell1"],
                                  "--dry-run")
        assert code == 3, text + err
        [line] = findings(text, "orphaned_allocation")
        assert line.startswith("cmp-1.example.org: ") and line.endswith(AUDIT_FIX)


def test_an_instance_without_allocations_refuses_and_heal_fixes_it(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        allocations_gone(url, fx.PLAIN)
        before = cfx.rows_digest(url)
        code, text, err = migrate(inputs, "--dry-run")
        assert code == 3, text + err
        assert cfx.rows_digest(url) == before
        [line] = findings(text, "missing_allocation")
        assert line.startswith("cmp-2.example.org: [missing_allocation] instance holds no "
                               "allocation in Placement; the reshape would leave it out")
        assert f"(consumer {fx.PLAIN})" in line and line.endswith(f": {HEAL_FIX}")
        assert findings(text, "orphaned_allocation") == []
        code, text, err = fix(HEAL_FIX, inputs)
        assert code == 0, text + err  # nova's "healed"
        code, text, err = migrate(inputs)
        assert code == 0, text + err


def test_damage_on_nodes_the_run_does_not_migrate_does_not_refuse(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP3_UUID)      # cmp-3 is in cell2
        allocations_gone(url, fx.PLAIN)   # PLAIN is on cmp-2, in cell1

        def damaged_nodes(*argv):
            code, text, err = migrate(inputs, "--dry-run", *argv)
            assert code in (0, 3), text + err
            return code, [line.split(":")[0] for line in text.splitlines() if ": [" in line]

        # cmp-1's host file alone (nova's API database from nova.conf): neither
        assert damaged_nodes("--host-file", str(tmp_path / "placement-hosts" / "cmp-1.yaml")
                             ) == (0, [])
        # cell2 alone: cmp-3's orphan, not cmp-2's instance
        assert damaged_nodes("--cell", "cell2") == (3, ["cmp-3.example.org"])
        # every cell: both
        assert damaged_nodes() == (3, ["cmp-3.example.org", "cmp-2.example.org"])


def test_no_consistency_check_goes_on(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP3_UUID)
        code, text, err = migrate(inputs, "--no-consistency-check")
        assert code == 0, text + err
        assert "consistency" not in err
        assert GHOST in cfx.held(url)  # left where it was


def test_host_files_without_a_nova_database_say_the_check_did_not_run(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP1_UUID)
        code, text, err = migrate(inputs[:2], "--host-file", str(tmp_path / "placement-hosts"),
                                  "--dry-run")
        assert code == 0, text + err
        assert err.count("consistency check not run: no nova database") == 1


def test_over_the_placement_url_too(engine, tmp_path):
    with api_fx.nova_cloud(engine) as cloud:
        url, inputs = setup(engine, cloud, tmp_path)
        orphan_on(url, fx.CMP1_UUID)
        allocations_gone(url, fx.PLAIN)
        before = cfx.rows_digest(url)
        with cfx.served(url) as base:
            code, text, err = migrate(inputs[2:], "--placement-url", base, "--token", "admin",
                                      "--header", "X-Roles: admin,service")
        assert code == 3, text + err
        assert cfx.rows_digest(url) == before
        assert [line.split(" Fix: ")[-1] for line in text.splitlines() if ": [" in line] == [
            "delete it before the migration, with this run's --nova-config and "
            f"--config-file: {AUDIT_FIX}",
            "heal it before the migration, with this run's --nova-config and --config-file, "
            f"or correct the instance on the old release where no command can: {HEAL_FIX}"]
