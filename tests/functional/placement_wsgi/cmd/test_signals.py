"""SIGTERM and SIGINT stop every long command cleanly, on every enabled engine.

The migration (one process and ``--workers``) is signalled mid-write as a
real subprocess: it exits with the signal's status (130/143), prints one
line naming how many nodes it wrote, leaves every node untouched or complete
and no worker behind, and running it again completes the rest. The other
commands get the signal from inside their work: one line, the same status.

SQLite runs every signal with one process and with two workers; PostgreSQL
and MariaDB run each signal and each worker count once (SIGTERM to one
process, SIGINT to two workers), since the signal handling is the engine's
only in what a cut transaction leaves. The other two pairs are cut on those
engines by ``tests/functional/nova_reshape/cmd/test_manage_cuts.py`` (the
status, the one line, untouched-or-complete, the re-run): its default seed
cuts SIGTERM with two workers and SIGINT with one there, which a test there
checks.
"""

from __future__ import annotations

import io
import os
import re
import signal

import pytest

from nova_reshape.cmd import describe
from nova_reshape.cmd import manage as reshape_manage
from nova_reshape.scheduler import cmd as scheduler_cmd
from placement_wsgi.cmd import manage as placement_manage
from tests.fixtures import killed_runs
from tests.fixtures.databases import enabled_engines

HOSTS = 40
LINE = re.compile(r"nova-reshape-manage: error: interrupted by (SIGTERM|SIGINT); (\d+) "
                  r"node\(s\) were written, every other node is untouched; running again "
                  r"is safe and completes the rest\n")
#: (engine, signal, --workers) of each signalled migration (see the docstring).
SIGNALLED = [
    (engine, signum, workers) for engine in enabled_engines()
    for signum, workers in ([(signal.SIGTERM, "1"), (signal.SIGTERM, "2"), (signal.SIGINT, "1"),
                             (signal.SIGINT, "2")] if engine == "sqlite"
                            else [(signal.SIGTERM, "1"), (signal.SIGINT, "2")])]


def _stop_mid_run(db_url, conf, out, signum, *extra):
    """Start the migration, send ``signum`` once it writes; (exit status, stderr)."""
    process = killed_runs.start(conf, out, *extra)
    group = process.pid
    try:
        killed_runs.wait_until_writing(db_url, process, at_least=killed_runs.CHILDREN_PER_HOST)
        if signum == signal.SIGINT:
            os.killpg(group, signum)  # Ctrl-C reaches the whole group, workers too
        else:
            process.send_signal(signum)  # the parent only, as `kill PID` does
        _, err = process.communicate(timeout=60)
        err = killed_runs.after_check_warning(err)
        assert killed_runs.group_gone(group, seconds=10), "a worker outlived the run"
    finally:
        killed_runs.kill_group(group)
        process.wait(30)
    return process.returncode, err


@pytest.mark.parametrize(("engine", "signum", "workers"), SIGNALLED)
def test_a_signalled_migration_says_what_it_wrote_and_a_rerun_completes(
        db_url, tmp_path, signum, workers):
    out, conf = killed_runs.generate(db_url, tmp_path, hosts=HOSTS, instances=8, kinds=())
    code, err = _stop_mid_run(db_url, conf, out, signum, "--workers", workers)
    assert code == 128 + signum, err
    match = LINE.fullmatch(err)
    assert match and match[1] == signal.Signals(signum).name, err
    complete = killed_runs.assert_untouched_or_complete(db_url, HOSTS)
    assert 0 < complete < HOSTS, "the signal did not land mid-run"
    # The count is exact: a signal waits for the nodes committed so far to be reported.
    assert int(match[2]) == complete, (match[2], complete)
    code, _ = _rerun(conf, out)
    assert code == reshape_manage.EXIT_OK
    killed_runs.assert_all_migrated(db_url, out, HOSTS)


def _rerun(conf, out):
    text, err = io.StringIO(), io.StringIO()
    code = reshape_manage.main(killed_runs.command(conf, out), out=text, err=err)
    assert "migrated" in text.getvalue(), (text.getvalue(), err.getvalue())
    return code, err.getvalue()


def _raising(signum):
    def command(*_args):
        signal.raise_signal(signum)
        raise AssertionError("the signal did not stop the command")
    return command


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_placement_manage_stops_with_one_line(monkeypatch, capsys, tmp_path, signum):
    conf = tmp_path / "placement.conf"
    conf.write_text(f"[placement_database]\nconnection = sqlite:///{tmp_path}/p.db\n")
    monkeypatch.setitem(placement_manage._COMMANDS, ("db", "sync"), _raising(signum))
    code = placement_manage.main(["--config-file", str(conf), "db", "sync"])
    err = capsys.readouterr().err
    assert code == 128 + signum
    assert err == (f"placement-manage: interrupted by {signal.Signals(signum).name}; what was "
                   "written is complete or rolled back, running again is safe\n")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_scheduler_stops_with_one_line(monkeypatch, capsys, signum):
    monkeypatch.setattr(scheduler_cmd, "explain", _raising(signum))
    code = scheduler_cmd.main(["explain", "scenario.json"])
    assert code == 128 + signum
    assert capsys.readouterr().err == (
        f"nova-reshape-scheduler: interrupted by {signal.Signals(signum).name}; "
        "nothing was written\n")


def test_describe_hosts_stops_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(describe, "describe_hosts", _raising(signal.SIGTERM))
    text, err = io.StringIO(), io.StringIO()
    code = reshape_manage.main(["placement", "describe_hosts", "--nova-api-database",
                                f"sqlite:///{tmp_path}/api.db", "--output",
                                str(tmp_path / "out")], out=text, err=err)
    assert code == 143 and text.getvalue() == ""
    assert err.getvalue() == ("nova-reshape-manage: error: interrupted by SIGTERM; what was "
                              "written is complete; running again is safe\n")
