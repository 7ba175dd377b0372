"""``placement runs``: the journal listed and shown, and the operator's mistakes."""

from __future__ import annotations

import io
import json

import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.journal import schema
from tests.fixtures.killed_runs import command, generate


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_a_migration_is_listed_and_shown_and_a_dry_run_is_not(db_url, tmp_path):
    out, conf = generate(db_url, tmp_path, hosts=2, instances=4)
    code, text, _ = _main("--config-file", conf, "placement", "runs")
    assert (code, text) == (0, "no runs recorded\n")
    assert _main(*command(conf, out, "--dry-run"))[0] == 0
    assert _main("--config-file", conf, "placement", "runs", "--format", "json")[1] == "[]\n"
    assert _main(*command(conf, out))[0] == 0
    code, text, _ = _main("--config-file", conf, "placement", "runs")
    header, row = text.splitlines()
    assert header.split() == ["RUN", "STARTED", "ENDED", "COMMAND", "CHANGED", "UNCHANGED",
                              "REFUSED", "STATUS"]
    cells = row.split()
    assert cells[-5:] == ["migrate_compute_inventory", "2", "0", "0", "ok"]
    code, text, _ = _main("--config-file", conf, "placement", "runs", "show", cells[0])
    assert code == 0 and f"run {cells[0]}\n" in text and "status: ok" in text
    assert "cmp-0000 (host cmp-0000, root " in text and "1 -> 9 providers" in text
    code, text, _ = _main("--config-file", conf, "placement", "runs", "show", cells[0],
                          "--format", "json")
    shown = json.loads(text)
    assert shown["id"] == cells[0] and shown["counts"] == {"migrated": 2}
    assert [node["nodename"] for node in shown["nodes"]] == ["cmp-0000", "cmp-0001"]
    assert len(shown["nodes"][0]["after"]["providers"]) == 9
    assert len(shown["nodes"][0]["before"]["providers"]) == 1


def test_mistakes_are_one_line_and_create_nothing(db_url, tmp_path):
    _, conf = generate(db_url, tmp_path, hosts=1, instances=2)
    code, text, err = _main("--config-file", conf, "placement", "runs", "show", "nope")
    assert code == manage.EXIT_BAD_INPUT and text == ""
    assert err == ("nova-reshape-manage: error: no run nope in the journal of this Placement "
                   "database (`placement runs` lists them)\n")
    missing = tmp_path / "missing.conf"
    code, _, err = _main("--config-file", str(missing), "placement", "runs")
    assert code == manage.EXIT_BAD_INPUT and len(err.splitlines()) == 1
    absent = tmp_path / "absent.sqlite"
    (tmp_path / "absent.conf").write_text(
        f"[placement_database]\nconnection = sqlite:///{absent}\n")
    code, _, err = _main("--config-file", str(tmp_path / "absent.conf"), "placement", "runs")
    assert code != 0 and len(err.splitlines()) == 1 and not absent.exists()
    code, _, err = _main("placement", "runs")
    assert code == manage.EXIT_BAD_INPUT and "[placement_database] connection" in err
    engine = sa.create_engine(db_url)
    try:
        assert not sa.inspect(engine).has_table(schema.VERSION_TABLE)
    finally:
        engine.dispose()
