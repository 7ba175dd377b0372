"""``placement revert``: exit classes, text output, signals and operator mistakes."""

from __future__ import annotations

import io
import json
import signal

import pytest

from nova_reshape.cmd import manage
from nova_reshape.cmd.revert import outcome
from nova_reshape.journal import RunStatus, list_runs
from nova_reshape.journal.revert import NodeRevert, RevertStatus
from placement_wsgi.db.database import Database
from tests.fixtures.killed_runs import (
    children,
    command,
    generate,
    start_revert,
    wait_until_reverting,
)


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _run_id(conf: str) -> str:
    return json.loads(_main("--config-file", conf, "placement", "runs", "--format",
                            "json")[1])[-1]["id"]


def test_the_exit_status_is_the_most_severe_node_outcome():
    def nodes(*statuses):
        return [NodeRevert(f"n{i}", None, "r", status) for i, status in enumerate(statuses)]

    assert outcome(nodes(RevertStatus.REVERTED, RevertStatus.ALREADY)) == (0, RunStatus.OK)
    assert outcome(nodes(RevertStatus.CONFLICT, RevertStatus.FAILED)) == (1, RunStatus.FAILED)
    assert outcome(nodes(RevertStatus.INVARIANT, RevertStatus.REFUSED)) == (
        manage.EXIT_REFUSED, RunStatus.REFUSED)
    assert outcome(nodes(RevertStatus.CONFLICT)) == (manage.EXIT_CONFLICT, RunStatus.CONFLICT)
    assert outcome([]) == (0, RunStatus.OK)


def test_text_output_names_each_node_and_the_revert_run(db_url, tmp_path):
    out, conf = generate(db_url, tmp_path, hosts=2, instances=4, kinds=())
    assert _main(*command(conf, out))[0] == 0
    run_id = _run_id(conf)
    code, text, _ = _main("--config-file", conf, "placement", "revert", run_id, "--dry-run")
    assert code == 0 and text.splitlines()[0].startswith("cmp-0000: would-revert: 4 provider(s) "
                                                         "deleted")
    assert "revert run" not in text
    code, text, _ = _main("--config-file", conf, "placement", "revert", run_id)
    lines = text.splitlines()
    assert code == 0 and lines[0].startswith("cmp-0000: reverted: 4 provider(s) deleted")
    revert_id = _run_id(conf)
    assert lines[-1] == f"revert run {revert_id} (revertable: placement revert {revert_id})"
    database = Database(db_url)
    try:
        [first, revert] = list_runs(database.engine)
    finally:
        database.dispose()
    assert (revert.command, revert.reverts, revert.changed) == ("revert", run_id, 2)
    assert revert.counts == {"reverted": 2} and revert.status is RunStatus.OK


def test_mistakes_are_one_line_and_write_nothing(db_url, tmp_path):
    _, conf = generate(db_url, tmp_path, hosts=1, instances=2)
    code, text, err = _main("--config-file", conf, "placement", "revert", "nope")
    assert code == manage.EXIT_BAD_INPUT and text == "" and len(err.splitlines()) == 1
    code, _, err = _main("placement", "revert", "nope")
    assert code == manage.EXIT_BAD_INPUT and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as stopped:
        _main("--config-file", conf, "placement", "revert")
    assert stopped.value.code == manage.EXIT_BAD_INPUT


def test_sigterm_stops_the_revert_between_nodes_and_says_so(db_url, tmp_path):
    hosts = 12
    out, conf = generate(db_url, tmp_path, hosts=hosts, instances=4, kinds=())
    assert _main(*command(conf, out))[0] == 0
    process = start_revert(conf, _run_id(conf))
    wait_until_reverting(db_url, process, below=hosts * 4)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith(
        "nova-reshape-manage: error: interrupted by SIGTERM")
    assert children(db_url) % 4 == 0 and children(db_url) < hosts * 4
    database = Database(db_url)
    try:
        revert = list_runs(database.engine)[-1]
    finally:
        database.dispose()
    # Recorded as interrupted, unless the database refused that last write (then it
    # stays running): either way its entries are exactly the nodes reverted.
    assert revert.status in (RunStatus.INTERRUPTED, RunStatus.RUNNING)
    assert revert.changed == hosts - children(db_url) // 4
