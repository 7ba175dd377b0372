"""tools/demo.py, the README's main command, runs start to finish."""

from __future__ import annotations

from tests.functional.nova_reshape.migrate_helpers import load_tool


def test_demo_generates_migrates_and_reruns(tmp_path, capsys):
    demo = load_tool("demo")
    assert demo.main(["--hosts", "1", "--instances", "4", "--keep", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    dry_run, real = text.split("=== 3.")
    assert "cmp-0000: would-migrate" in dry_run and "Dry run: nothing changed." in dry_run
    assert "cmp-0000: migrated" in real and "cmp-0001: skipped (ironic)" in real
    assert "└── cmp-0000-fpga-0 (" in real
    assert real.rstrip().endswith("1 skipped, 1 unchanged. Done.")
    # The scheduling check's table in the dry run, re-checked by the real run, and
    # nova-reshape-scheduler capacity's per-host table.
    assert "Scheduling check (nova 34's scheduler; before -> after this migration):" in dry_run
    # the one compute host is disabled: no flavor fits before nor after, no finding
    assert "  flavor m1.medium: nowhere: 0 -> 0 valid host(s), 0 -> 0 more fit" in dry_run
    assert "Scheduling re-checked after writing: the same as planned" in real
    capacity = real.split("=== 5.")[1].split("=== 6.")[0]
    assert "flavor g1.vgpu: 0 of 2 host(s) valid, 0 more fit\n  cmp-0000  -      0  Placement " \
        "capacity [group (unsuffixed)]: VGPU: (2 - 0) x 1 - 2 = 0 free, asked 1" in capacity
    # A pinned guest's VCPU becomes PCPU; the disabled compute stays disabled.
    assert "convert VCPU 2 to PCPU of consumer " in dry_run
    assert "cmp-0000 is disabled in nova and its root still carries COMPUTE_STATUS_DISABLED" in real
    before, after = real.split("  before: ")[1].split("  after:  ")
    assert "'VCPU': 2" in before and "'PCPU'" not in before
    assert "'PCPU': 2" in after.splitlines()[0] and "'VCPU'" not in after.splitlines()[0]
    assert (tmp_path / "placement.sqlite").exists()
    report = tmp_path / "report.html"
    assert f"report: {report} (" in real
    assert 'class="node" id="node-cmp-0000"' in report.read_text(encoding="utf-8")


def test_demo_from_nova_db_describes_migrates_and_reruns(tmp_path, capsys):
    demo = load_tool("demo")
    assert demo.main(["--from-nova-db", "--keep", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    described, dry_run = text.split("=== 4.")
    dry_run, real = dry_run.split("=== 5.")
    real, rerun = real.split("=== 6.")
    assert "3 host description(s) written" in described
    assert "cpu_policy: dedicated" in described and "mdevs:" in described
    # the dry run says where each fact came from, then what would move
    assert "  gpus: collected file\n" in dry_run and "  pci_devices: nova DB\n" in dry_run
    assert "move VGPU 1 of consumer 10000000-0000-4000-8000-000000000003" in dry_run
    assert "convert VCPU 2 to PCPU of consumer 10000000-0000-4000-8000-000000000001" in dry_run
    assert "COMPUTE_STATUS_DISABLED" in dry_run
    assert "Dry run: nothing changed." in dry_run
    assert "cmp-1.example.org: migrated" in real and "bm-0001: skipped (ironic)" in real
    assert rerun.rstrip().endswith("1 skipped, 2 unchanged. Done.")
    assert (tmp_path / "nova.sqlite").exists() and (tmp_path / "placement.sqlite").exists()
