"""The migration cut at five random points, each followed by a re-run.

One flat deployment; a chain of runs of the real command, each cut once it
has written a randomly chosen number of nodes more than the last: by
SIGKILL, SIGTERM or SIGINT (one process or ``--workers 2``) or, on
PostgreSQL and MariaDB, by cutting its database connections through the TCP
proxy (``tests/fixtures/tcp_proxy.py``). Each next run is the previous one's
re-run. After every cut: every node untouched or complete, and every
consumer holding exactly what it held (the GPUs' units only move), read from
the tables (``tests/fixtures/killed_runs.py``; the first check, before any
cut, reads the same totals through the API). At the end one run completes
the rest and one more finds every node unchanged.

The random choices come from a seed, printed, and taken from
``NOVA_RESHAPE_CUT_SEED`` when set, so a failure reproduces. On PostgreSQL
and MariaDB fewer points are cut (each run costs more there).
"""

from __future__ import annotations

import io
import json
import os
import random
import signal

import pytest

from nova_reshape.cmd import manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import killed_runs
from tests.fixtures.config import make_conf
from tests.fixtures.tcp_proxy import TcpProxy
from tests.functional.nova_reshape import migrate_helpers as helpers

HOSTS = 80
#: Points cut on SQLite, and on a database server: enough for every kind and
#: both worker counts to come up (checked below).
POINTS = {"sqlite": 5}
SERVER_POINTS = 4
DEFAULT_SEED = 20261125
#: The exit statuses a cut leaves: a signal's (negative: the process died of it).
STATUS_OF = {"SIGKILL": -signal.SIGKILL, "SIGTERM": 143, "SIGINT": 130, "connection": 1}


def _cuts(rng: random.Random, engine: str) -> list[tuple[int, str, str]]:
    """(nodes written before the cut, how, workers) per point, in order."""
    points = POINTS.get(engine, SERVER_POINTS)
    kinds = ["SIGKILL", "SIGTERM", "SIGINT"] + (["connection"] if engine != "sqlite" else [])
    # In the first quarter: a run writes its nodes several per transaction (a
    # batch in twenty), so quickly that a cut aimed past the middle could land
    # after the run's last write (seen on CI: the run exited 0 before SIGTERM).
    thresholds = sorted(rng.sample(range(1, HOSTS // 4), points))
    # Every kind and both worker counts come up, in a random order.
    hows = (kinds * points)[:points]
    workers = (["1", "2"] * points)[:points]
    rng.shuffle(hows)
    rng.shuffle(workers)
    return list(zip(thresholds, hows, workers, strict=True))


def _cut_run(db_url, conf, out, threshold, how, workers, proxy):
    """One run of the migration cut ``how`` once ``threshold`` nodes are written."""
    process = killed_runs.start(conf, out, "--workers", workers)
    try:
        killed_runs.wait_until_writing(db_url, process,
                                       at_least=threshold * killed_runs.CHILDREN_PER_HOST)
        match how:
            case "connection":
                proxy.refuse()
            case "SIGINT":
                os.killpg(process.pid, signal.SIGINT)
            case _:
                process.send_signal(signal.Signals[how])
        _, err = process.communicate(timeout=60)
        err = killed_runs.after_check_warning(err)
        assert killed_runs.group_gone(process.pid, seconds=10), "a worker outlived the run"
    finally:
        killed_runs.kill_group(process.pid)
        process.wait(30)
        if proxy:
            proxy.restore()
    return process.returncode, err


def _conserved_through_the_api(db_url: str, expected: dict) -> None:
    with PlacementDirect(make_conf(db_url)) as placement:
        assert helpers.actual_totals(placement, expected) == expected


def test_cut_at_random_points_then_rerun(db_url, engine, tmp_path, capsys):
    seed = int(os.environ.get("NOVA_RESHAPE_CUT_SEED", DEFAULT_SEED))
    with capsys.disabled():
        print(f"\n{__name__}: seed {seed} (NOVA_RESHAPE_CUT_SEED reproduces it)")
    rng = random.Random(seed)
    out, conf = killed_runs.generate(db_url, tmp_path, hosts=HOSTS, instances=8, kinds=())
    expected = helpers.expected_totals(out)
    _conserved_through_the_api(db_url, expected)
    proxy = None if engine == "sqlite" else TcpProxy.for_url(db_url)
    try:
        cut_conf = conf
        if proxy:
            cut_conf = str(tmp_path / "proxied.conf")
            helpers.generator.write_config(cut_conf, proxy.url_for(db_url))
        complete = 0
        for threshold, how, workers in _cuts(rng, engine):
            point = (seed, threshold, how, workers)
            # A cut lands after at least one more node (the last cut may have overshot).
            code, err = _cut_run(db_url, cut_conf, out, max(threshold, complete + 1), how,
                                 workers, proxy)
            assert code == STATUS_OF[how], (point, err)
            assert "Traceback" not in err, (point, err)
            if how in ("SIGTERM", "SIGINT"):
                assert err.count("\n") == 1 and f"interrupted by {how}; " in err, (point, err)
            placement = killed_runs.read_placement(db_url)
            now = killed_runs.assert_untouched_or_complete(db_url, HOSTS, placement)
            assert complete <= now < HOSTS, (point, complete, now)
            complete = now
            assert killed_runs.held(placement, expected) == expected, point
    finally:
        if proxy:
            proxy.close()
    text, err = io.StringIO(), io.StringIO()
    assert manage.main(killed_runs.command(conf, out), out=text, err=err) == 0, err.getvalue()
    killed_runs.assert_all_migrated(db_url, out, HOSTS)
    text = io.StringIO()
    code = manage.main(killed_runs.command(conf, out, "--format", "json"), out=text, err=err)
    assert code == 0 and json.loads(text.getvalue())["summary"] == {"unchanged": HOSTS}


@pytest.mark.parametrize("engine_name", ["sqlite", "postgresql"])
def test_the_points_are_reproducible_and_kinds_fit_the_engine(engine_name):
    first = _cuts(random.Random(7), engine_name)
    assert first == _cuts(random.Random(7), engine_name)
    assert len(first) == POINTS.get(engine_name, SERVER_POINTS)
    assert [threshold for threshold, _, _ in first] == sorted({t for t, _, _ in first})
    kinds = {how for _, how, _ in first}
    assert kinds == set(STATUS_OF) - ({"connection"} if engine_name == "sqlite" else set())
    assert {workers for _, _, workers in first} == {"1", "2"}


def test_the_default_seed_cuts_the_signal_pairs_test_signals_leaves_to_it():
    # tests/functional/placement_wsgi/cmd/test_signals.py signals PostgreSQL and
    # MariaDB runs with SIGTERM to one process and SIGINT to two workers only.
    cut = {(how, workers) for _, how, workers in _cuts(random.Random(DEFAULT_SEED), "mysql")}
    assert {("SIGTERM", "2"), ("SIGINT", "1")} <= cut
