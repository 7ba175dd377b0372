"""``migrate_compute_inventory``'s scheduling check from nova's cell database, on every
enabled engine: pinned flavors and CPU sets, PCI aliases with and without
``report_in_placement``, the refusal (exit 3, nothing written), accepting a loss, the
JSON report, and the dry run's answer equal to the real run's."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pathlib

import jsonschema
import pytest

from nova_reshape.cmd import manage
from placement_wsgi.db.database import Database
from tests.fixtures import cyborg_db, nova_db
from tests.fixtures import scheduling_cloud as cloud
from tests.fixtures.databases import SERVERS, checksum
from tests.functional.nova_reshape import migrate_helpers as helpers

SCHEMA = pathlib.Path(__file__).parents[1] / "runreport" / "report.schema.json"
DEDICATED = cloud.Node("cmp-a", "b0000000-0000-4000-8000-00000000000a")
SHARED_ONLY = cloud.Node("cmp-b", "b0000000-0000-4000-8000-00000000000b")
OFF = cloud.Node("cmp-off", "b0000000-0000-4000-8000-0000000000ff", disabled=True)
WITH_GPU = cloud.Node("cmp-p", "b0000000-0000-4000-8000-00000000000c", pci=("0000:d8:00.0",))

FLAVORS = [{"name": "p2", "vcpus": 2, "memory_mb": 1024, "root_gb": 10,
            "extra_specs": {"hw:cpu_policy": "dedicated"}},
           {"name": "m1", "vcpus": 1, "memory_mb": 512, "root_gb": 10},
           {"name": "huge", "vcpus": 64, "memory_mb": 512}]
ALIAS = '{"name": "a100", "vendor_id": "10de", "product_id": "20b5", "device_type": "type-PCI"}'
GPU_FLAVOR = [{"name": "a1", "vcpus": 1, "memory_mb": 512, "root_gb": 10,
               "extra_specs": {"pci_passthrough:alias": "a100:1"}}]
FILTERS = "ComputeFilter,NUMATopologyFilter,PciPassthroughFilter"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def deployment(engine, tmp_path, nodes, conf="", flavors=FLAVORS):
    """nova's cell and a flat Placement for ``nodes``; the command's arguments."""
    db_url = SERVERS.fresh_url(engine)
    cloud.write_flat(db_url, nodes)
    config = tmp_path / "placement.conf"
    helpers.generator.write_config(str(config), db_url)
    confs = tmp_path / "nova-conf.d"
    confs.mkdir()
    (confs / "nova.conf").write_text(f"[filter_scheduler]\nenabled_filters = {FILTERS}\n{conf}")
    (confs / "cmp-a.conf").write_text("[compute]\ncpu_shared_set = 0-3\n"
                                      "cpu_dedicated_set = 4-7\n")
    (confs / "cmp-b.conf").write_text("[compute]\ncpu_shared_set = 0-7\n")
    cell = contextlib.contextmanager(nova_db.nova_cell)(engine, content=cloud.cell_rows(nodes))
    with cell as cell_url:
        yield db_url, ["--config-file", str(config), "placement", "migrate_compute_inventory",
                       "--nova-database", cell_url, "--nova-config", str(confs),
                       "--flavors-file", cloud.flavors_file(tmp_path / "f.yaml", flavors)]


def verdicts(document):
    return {flavor["name"]: flavor for flavor in document["scheduling"]["flavors"]}


def test_pinned_flavor_keeps_the_host_with_a_dedicated_set(engine, tmp_path):
    with deployment(engine, tmp_path, [DEDICATED, SHARED_ONLY, OFF]) as (db_url, argv):
        code, text, err = run(*argv, "--dry-run", "--format", "json")
        assert code == 0, text + err
        dry = json.loads(text)
        found = verdicts(dry)
        # before: both pre-Train hosts take p2 (VCPU fallback, every CPU pinnable);
        # after: cmp-a's four dedicated CPUs take two, cmp-b has none
        assert (found["p2"]["verdict"], found["p2"]["total_before"],
                found["p2"]["total_after"]) == ("loss", 8, 2)
        assert [lost["name"] for lost in found["p2"]["lost"]] == ["cmp-b"]
        assert found["p2"]["lost"][0]["reason"].startswith("NUMATopologyFilter: ")
        # plain flavors lose the dedicated CPUs: VCPU is only the shared set now
        assert (found["m1"]["total_before"], found["m1"]["total_after"]) == (16, 12)
        assert found["huge"]["verdict"] == "nowhere" and found["huge"]["lost"] == []
        off = {h["name"]: h for h in dry["scheduling"]["after"]["flavors"][1]["hosts"]}
        assert off["cmp-off"] == {"name": "cmp-off", "valid": False, "fits": 0, "reason": (
            "Placement root_forbidden: root has forbidden trait(s) COMPUTE_STATUS_DISABLED")}
        assert dry["scheduling"]["rechecked"] is None

        report = tmp_path / "report.json"
        code, text, err = run(*argv, "--format", "json", "--report", str(report))
        assert code == 0, text + err
        real = json.loads(text)["scheduling"]
        table = json.loads(report.read_text())["scheduling"]
        rows = {row[0]: row for row in table["rows"]}
        assert table["columns"][:6] == ["flavor", "verdict", "valid hosts before",
                                        "valid hosts after", "more fit before",
                                        "more fit after"]
        assert rows["p2"][:6] == ["p2", "loss", 2, 1, 8, 2]
        assert rows["p2"][6].startswith("cmp-b: NUMATopologyFilter: ")
        assert real["rechecked"] == {"after": dry["scheduling"]["after"], "differs": []}
        assert real["after"] == dry["scheduling"]["after"]


def test_a_pinned_flavor_without_any_dedicated_set_refuses_the_run(engine, tmp_path):
    with deployment(engine, tmp_path, [SHARED_ONLY]) as (db_url, argv):
        database = Database(db_url)
        before = checksum(database)
        code, text, err = run(*argv)
        assert code == 3, text + err
        assert checksum(database) == before  # nothing written
        findings = [line for line in text.splitlines() if "[scheduling_lost]" in line]
        assert len(findings) == 1 and findings[0].startswith(
            "flavor p2: [scheduling_lost] had 1 valid host(s) and has none once the plan is "
            "applied: cmp-b: NUMATopologyFilter: ")
        assert "  flavor p2: LOST: 1 -> 0 valid host(s), 4 -> 0 more fit" in text
        assert text.splitlines()[-1] == ("refused: 1 flavor(s) would have no valid host after "
                                         "the migration: nothing was written")
        report = tmp_path / "refused.json"
        code, text, err = run(*argv, "--format", "json", "--report", str(report))
        document = json.loads(text)
        assert code == 3 and document["findings"][0]["code"] == "scheduling_lost"
        written = json.loads(report.read_text())
        jsonschema.validate(written, json.loads(SCHEMA.read_text()))
        assert written["outcome"]["exit_code"] == 3 and written["nodes"] == []
        assert [row[:2] for row in written["scheduling"]["rows"]] == [
            ["p2", "lost"], ["m1", "same"], ["huge", "nowhere"]]
        assert verdicts(document)["p2"]["verdict"] == "lost"
        assert checksum(database) == before

        code, text, err = run(*argv, "--accept-scheduling-loss", "p2")
        assert code == 0, text + err
        assert "  flavor p2: LOST (accepted): 1 -> 0 valid host(s)" in text
        assert "Scheduling re-checked after writing: the same as planned" in text
        assert checksum(database) != before
        database.dispose()


@pytest.mark.parametrize("in_placement", [False, True])
def test_pci_alias_flavor_with_and_without_report_in_placement(engine, tmp_path,
                                                              in_placement):
    conf = f"[pci]\nalias = {ALIAS}\n"
    node = WITH_GPU
    if not in_placement:  # nova tracks the device (its pool); nothing describes it
        node = dataclasses.replace(WITH_GPU, pci_rows=False)
    else:
        conf += ('report_in_placement = True\n'
                 'device_spec = {"vendor_id": "10de", "product_id": "20b5"}\n'
                 '[filter_scheduler]\npci_in_placement = True\n')
    with deployment(engine, tmp_path, [node], conf, GPU_FLAVOR) as (db_url, argv):
        code, text, err = run(*argv, "--dry-run", "--format", "json")
        assert code == 0, text + err
        found = verdicts(json.loads(text))["a1"]
    if not in_placement:
        # the pools of nova's database decide, before and after alike
        assert (found["verdict"], found["total_before"], found["total_after"]) == (
            "same", 1, 1)
        assert found["notes"] == []
    else:
        # before: no PCI provider in Placement yet; after: the device's child
        assert (found["verdict"], found["total_before"], found["total_after"]) == (
            "gained", 0, 1)
        assert found["gained"] == ["cmp-p"]
        assert "cannot be scheduled between this migration and each compute's first " \
               "start" in found["notes"][0]


def test_no_scheduling_check_and_an_unknown_accepted_flavor(engine, tmp_path):
    with deployment(engine, tmp_path, [SHARED_ONLY]) as (db_url, argv):
        code, text, err = run(*argv, "--dry-run", "--no-scheduling-check")
        assert code == 0 and "Scheduling" not in text, text + err
        code, text, err = run(*argv, "--dry-run", "--accept-scheduling-loss", "m9")
        assert code == 2 and "Scheduling" not in text
        assert err.startswith("nova-reshape-manage: error: --accept-scheduling-loss m9: not a "
                              "flavor the check answers for (huge, m1, p2)") and \
            err.count("\n") == 1
        code, text, err = run(*argv, "--dry-run", "--flavors-file", str(tmp_path / "none"))
        assert code == 2 and "--flavors-file" in err and err.count("\n") == 1


ACCEL_FLAVORS = [{"name": name, "vcpus": 1, "memory_mb": 512,
                  "extra_specs": {"accel:device_profile": profile}}
                 for name, profile in (("fpga1", "fpga-arria10"), ("nope", "no-such-profile"))]


def test_device_profiles_come_from_the_cyborg_database_given(engine, tmp_path):
    # no host of this cloud has an FPGA: with Cyborg's database the known profile is
    # Placement's to refuse, the unknown one is named; without it neither resolves
    cyborg = contextlib.contextmanager(cyborg_db.cyborg_database)(engine)
    with deployment(engine, tmp_path, [SHARED_ONLY], flavors=ACCEL_FLAVORS) as (_, argv), \
            cyborg as cyborg_url:
        code, text, err = run(*argv, "--dry-run", "--format", "json",
                              "--cyborg-database", cyborg_url)
        assert code == 0, text + err
        after = {flavor["name"]: flavor
                 for flavor in json.loads(text)["scheduling"]["after"]["flavors"]}
        (host,) = after["fpga1"]["hosts"]
        assert not host["valid"] and "device_profile_0" in host["reason"]
        assert after["nope"]["hosts"] == []
        found = verdicts(json.loads(text))
        assert "no such profile in Cyborg's database" in found["nope"]["notes"][0]
        code, text, err = run(*argv, "--dry-run", "--format", "json")
        assert code == 0, text + err
        assert "--cyborg-database" in verdicts(json.loads(text))["fpga1"]["notes"][0]
