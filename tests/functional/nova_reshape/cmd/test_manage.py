"""``nova-reshape-manage placement migrate_compute_inventory``: the command line.

Exit codes, output formats, dry run, bad input, the HTTP mode, and a run
killed with SIGKILL in the middle then completed by a second run, on every
enabled engine.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

from nova_reshape.cmd import manage
from nova_reshape.compute import migrate
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import killed_runs
from tests.fixtures.config import make_conf
from tests.fixtures.databases import checksum
from tests.fixtures.killed_runs import children as _children
from tests.fixtures.killed_runs import command as _command
from tests.fixtures.killed_runs import generate as _generate
from tests.fixtures.killed_runs import wait_until_writing
from tests.functional.nova_reshape import migrate_helpers as helpers


def _main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_migrate_then_nothing_to_do(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=3, instances=6, ironic=1)
    code, text, err = _main(*_command(conf, out))
    assert code == manage.EXIT_OK, err
    assert "cmp-0000: migrated, " in text and "cmp-0002: skipped" in text
    assert text.rstrip().endswith("2 migrated, 1 skipped. Done.")
    code, text, _ = _main(*_command(conf, out, "--format", "json"))
    report = json.loads(text)
    assert code == 0 and report["exit_code"] == 0
    assert report["summary"] == {"unchanged": 2, "skipped": 1}
    assert [child["name"] for child in report["nodes"][0]["after"]["children"]][:2] == [
        "cmp-0000_pci_0000_84_00_0", "cmp-0000_pci_0000_85_00_0"]
    with PlacementDirect(make_conf(db_url)) as placement:
        expected = helpers.expected_totals(out)
        assert helpers.actual_totals(placement, expected) == expected


def test_dry_run_draws_trees_and_moves_and_changes_nothing(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=1, instances=4)
    code, text, _ = _main(*_command(conf, out, "--dry-run"))
    assert code == 0
    assert "cmp-0000: would-migrate" in text
    assert "  before:\n    cmp-0000 (" in text
    assert "VGPU 4 (x1)" not in text and "VCPU 32 (x4)" in text
    assert "    ├── cmp-0000_pci_0000_84_00_0 (" in text
    assert "    └── cmp-0000-fpga-0 (" in text
    assert "move VGPU 1 of consumer " in text and "_NUMA0" not in text  # nova 34 has none
    assert "create CUSTOM_PCI_10DE_20B5 1 of consumer " in text
    assert "Dry run: nothing changed." in text
    assert _children(db_url) == 0
    code, text, err = _main(*_command(conf, out, "--dry-run", "--numa-in-placement"))
    assert code == 0 and " -> cmp-0000_NUMA0" in text
    assert err.count("--numa-in-placement: no nova release") == 1
    code, text, _ = _main(*_command(conf, out, "--dry-run", "--target-release", "stein"))
    assert code == 0 and "cmp-0000-fpga-0" not in text  # Cyborg's providers: Ussuri on
    assert "cmp-0000_pci_0000_84_00_0" in text
    with pytest.raises(SystemExit) as exited:
        _main(*_command(conf, out, "--target-release", "folsom"))
    assert exited.value.code == manage.EXIT_BAD_INPUT
    code, text, _ = _main(*_command(conf, out, "--dry-run", "--format", "json"))
    node = json.loads(text)["nodes"][0]
    assert node["status"] == "would-migrate" and node["before"]["children"] == []
    assert {m["target_name"] for m in node["moves"] if m["resource_class"] == "VGPU"} == {
        f"cmp-0000_pci_0000_{bus}_00_0" for bus in (84, 85, 86, 87)}


def test_refused_exit_code_and_findings(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=1, instances=4)
    path = os.path.join(out, "cmp-0000.yaml")
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(text.replace("capacity: 1\n", "capacity: 0\n", 1))
    code, text, _ = _main(*_command(conf, out))
    assert code == manage.EXIT_REFUSED
    assert "[description_mismatch]" in text and "Fix: " in text
    assert "Refused by the pre-flight checks: nothing was written" in text
    assert _children(db_url) == 0


def test_bad_input(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=1, instances=1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes:\n  - nodename: x\n    gpus: [{address: nope, capacity: 1}]\n")
    code, _, err = _main(*_command(conf, str(bad)))
    assert code == manage.EXIT_BAD_INPUT
    assert f"{bad}: nodes[0].gpus[0].address: 'nope' is not a PCI address" in err
    code, _, err = _main("placement", "migrate_compute_inventory", "--host-file", out)
    assert code == manage.EXIT_BAD_INPUT and "give --config-file" in err
    code, _, err = _main(*_command(conf, out, "--placement-url", "http://x"))
    assert code == manage.EXIT_BAD_INPUT and "not both" in err
    code, _, err = _main("placement", "migrate_compute_inventory", "--host-file", out,
                         "--placement-url", "http://x", "--header", "no-colon")
    assert code == manage.EXIT_BAD_INPUT and "is not NAME:VALUE" in err
    empty = tmp_path / "empty.conf"
    empty.write_text("[DEFAULT]\n")
    code, _, err = _main(*_command(str(empty), out))
    assert code == manage.EXIT_BAD_INPUT and "connection is not set" in err
    # No Placement database and no source of hosts: Placement's is reported first.
    code, _, err = _main("placement", "migrate_compute_inventory")
    assert code == manage.EXIT_BAD_INPUT and err.count("\n") == 1
    assert "give --config-file" in err
    # No host file and no nova database named anywhere (command line or nova.conf).
    code, _, err = _main("--config-file", conf, "placement", "migrate_compute_inventory")
    assert code == manage.EXIT_BAD_INPUT and err.count("\n") == 1
    assert "[api_database] connection" in err


def test_against_a_running_service(raw_placement, tmp_path):
    out = str(tmp_path / "hosts")
    helpers.generator.generate(raw_placement, out, hosts=1, instances=3)
    journal = tmp_path / "journal.sqlite"
    code, text, err = _main("placement", "migrate_compute_inventory", "--placement-url",
                            raw_placement.base_url, "--token", "admin", "--header",
                            "X-Roles: admin,service", "--host-file", out, "--progress",
                            "--journal", str(journal))
    assert code == 0, (text, err)
    assert "cmp-0000: migrated" in text and "1/1 nodes migrate" in err
    assert f"journal: {journal}, run " in err and journal.exists()
    expected = helpers.expected_totals(out)
    assert helpers.actual_totals(raw_placement, expected) == expected


def test_exit_codes_by_outcome():
    def results(*statuses):
        return [migrate.NodeResult(f"n{i}", status) for i, status in enumerate(statuses)]

    assert manage.exit_code(results("migrated", "unchanged", "skipped")) == 0
    assert manage.exit_code(results("refused", "not-run")) == 3
    assert manage.exit_code(results("migrated", "conflict")) == 4
    assert manage.exit_code(results("conflict", "failed", "not-run")) == 1
    assert manage.exit_code(results("migrated", "invariant-violated")) == 5


def test_killed_mid_run_then_rerun_completes(db_url, tmp_path):
    hosts = 40
    out, conf = _generate(db_url, tmp_path, hosts=hosts, instances=8, kinds=())
    process = subprocess.Popen(
        [sys.executable, "-m", "nova_reshape.cmd.manage", *_command(conf, out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_writing(db_url, process)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(30)
    killed_with = _children(db_url)
    assert 0 < killed_with < hosts * 4, "the kill did not land mid-run"
    # In-process each node is written in one transaction: untouched or complete.
    killed_runs.assert_untouched_or_complete(db_url, hosts)
    code, text, err = _main(*_command(conf, out))
    assert code == 0, (text, err)
    killed_runs.assert_all_migrated(db_url, out, hosts)


def test_nova_config_disagreement_refuses_with_the_key_to_change(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=1, instances=4)
    nova_conf = tmp_path / "nova.conf"
    nova_conf.write_text(
        '[pci]\ndevice_spec = {"vendor_id": "10de", "traits": "a100"}\n'
        'device_spec = {"vendor_id": "8086", "resource_class": "fast_nic"}\n')
    code, text, _ = _main(*_command(conf, out, "--nova-config", str(nova_conf)))
    assert code == manage.EXIT_REFUSED and _children(db_url) == 0
    assert ("[nova_conf] PCI devices are described but [pci] report_in_placement is false: "
            "nova-compute 34 would refuse to start") in text
    code, text, _ = _main(*_command(conf, out, "--nova-config", str(nova_conf),
                                    "--print-nova-config"))
    assert code == manage.EXIT_OK and _children(db_url) == 0
    assert "# cmp-0000: nova.conf for nova-compute 34 (2026.2)\n" in text
    assert "[pci]\nreport_in_placement = True\n" in text
    nova_conf.write_text(nova_conf.read_text() + "report_in_placement = True\n")
    code, text, _ = _main(*_command(conf, out, "--nova-config", str(nova_conf)))
    assert code == manage.EXIT_OK, text
    code, _, err = _main(*_command(conf, out, "--nova-config", str(tmp_path / "absent")))
    assert code == manage.EXIT_BAD_INPUT and "cannot read" in err


def test_json_dry_run_plan_is_what_the_run_writes(db_url, tmp_path):
    out, conf = _generate(db_url, tmp_path, hosts=1, instances=4)
    code, text, _ = _main(*_command(conf, out, "--dry-run", "--format", "json"))
    node = json.loads(text)["nodes"][0]
    plan = node["plan"]
    assert code == 0 and node["status"] == "would-migrate" and node["writes"] == 0
    code, text, _ = _main(*_command(conf, out, "--dry-run"))
    assert "  plan:\n    create provider cmp-0000_pci_0000_84_00_0 (" in text
    assert "in one POST /reshaper: " in text
    code, text, _ = _main(*_command(conf, out))
    assert code == 0
    with PlacementDirect(make_conf(db_url)) as placement:
        listed = helpers.ok(placement.get(f"/resource_providers?in_tree={node['root']}",
                                          microversion="1.14"))["resource_providers"]
        created = {(p["name"], p["uuid"], p["parent_provider_uuid"]) for p in listed
                   if p["uuid"] != node["root"]}
        assert created == {(p["name"], p["uuid"], p["parent_uuid"]) for p in plan["create"]}
        for consumer, body in plan["allocations"].items():
            held = helpers.ok(placement.get(f"/allocations/{consumer}",
                                            microversion="1.28"))["allocations"]
            assert {rp: entry["resources"] for rp, entry in held.items()} == {
                rp: entry["resources"] for rp, entry in body["allocations"].items()}
        assert plan["reshaper"]["allocations"].keys() == plan["allocations"].keys()
    code, text, _ = _main(*_command(conf, out, "--format", "json"))
    assert json.loads(text)["nodes"][0]["plan"]["create"] == []


@pytest.mark.parametrize("raw_placement", ["http"], indirect=True)
@pytest.mark.parametrize(("headers", "denied"), [
    (["--token", "admin", "--header", "X-Roles: admin"], "POST /reshaper with 403"),
    (["--token", "reader", "--header", "X-Roles: reader"], "GET /resource_providers with 403"),
])
def test_a_token_without_the_rights_is_refused_before_anything_is_written(
        raw_placement, database, db_url, tmp_path, headers, denied):
    out = str(tmp_path / "hosts")
    helpers.generator.generate(raw_placement, out, hosts=2, instances=3)
    before = checksum(database)
    code, text, err = _main("placement", "migrate_compute_inventory", "--placement-url",
                            raw_placement.base_url, *headers, "--host-file", out)
    assert (code, text) == (manage.EXIT_BAD_INPUT, ""), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"nova-reshape-manage: error: Placement at {raw_placement.base_url} "
                          f"answered {denied} (")
    assert err.endswith("; give a token with that role (--token, --header); nothing was "
                        "written\n")
    assert checksum(database) == before
    assert _children(db_url) == 0
