"""tools/demo.py, the README's main command, runs start to finish."""

from __future__ import annotations

from tests.functional.nova_reshape.migrate_helpers import load_tool


def test_demo_generates_migrates_and_reruns(tmp_path, capsys):
    demo = load_tool("demo")
    assert demo.main(["--hosts", "1", "--instances", "3", "--keep", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    dry_run, real = text.split("=== 3.")
    assert "cmp-0000: would-migrate" in dry_run and "Dry run: nothing changed." in dry_run
    assert "cmp-0000: migrated" in real and "cmp-0001: skipped (ironic)" in real
    assert "└── cmp-0000-fpga-0 (" in real
    assert real.rstrip().endswith("1 skipped, 1 unchanged. Done.")
    assert (tmp_path / "placement.sqlite").exists()
