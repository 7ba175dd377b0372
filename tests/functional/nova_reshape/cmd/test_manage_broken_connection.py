"""The migration command over a database connection that breaks mid-run.

``nova-reshape-manage placement migrate_compute_inventory`` reaches
PostgreSQL/MariaDB through :class:`tests.fixtures.tcp_proxy.TcpProxy`. The
connection is cut while the first node's reshape writes its allocations and
the database stays down: the command stops (exit 1) with one line per node
and a summary, the node's inventories and allocations are as they were, no
later node is touched, and a re-run once the database is back completes.
"""

from __future__ import annotations

import io

import pytest
import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.cmd.consistency_check import NOT_RUN  # host files only: said once
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import databases
from tests.fixtures.config import make_conf
from tests.fixtures.tcp_proxy import TcpProxy
from tests.functional.nova_reshape import migrate_helpers as helpers

SERVER_ENGINES = [engine for engine in databases.enabled_engines() if engine != "sqlite"]

needs_server = pytest.mark.skipif(not SERVER_ENGINES, reason=(
    "needs NOVA_RESHAPE_TEST_POSTGRESQL or NOVA_RESHAPE_TEST_MYSQL"))


def _main(conf: str, out: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = manage.main(["--config-file", conf, "placement", "migrate_compute_inventory",
                        "--host-file", out], out=stdout, err=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


@needs_server
@pytest.mark.parametrize("engine", SERVER_ENGINES or ["none"])
def test_connection_cut_mid_run_stops_then_rerun_completes(engine, tmp_path) -> None:
    url = databases.SERVERS.fresh_url(engine)
    out = str(tmp_path / "hosts")
    with PlacementDirect(make_conf(url)) as placement:
        helpers.generator.generate(placement, out, hosts=3, instances=4, kinds=())
    before = helpers.placement_rows(url)
    with TcpProxy.for_url(url, lifetime=240) as proxy:
        conf = str(tmp_path / "placement.conf")
        helpers.generator.write_config(conf, proxy.url_for(url))
        proxy.cut_when(b"INSERT INTO allocations", then_refuse=True)
        code, text, err = _main(conf, out)
        assert proxy.cuts == 1, "the cut did not happen"
        assert code == manage.EXIT_FAILED, (text, err)
        lines = text.strip().splitlines()
        assert lines[0].startswith("cmp-0000: failed"), text
        assert "The database is unreachable; nothing was changed" in lines[0]
        assert all(line.startswith(("cmp-0001: not-run", "cmp-0002: not-run"))
                   for line in lines[1:3]), text
        assert "1 failed, 2 not-run." in lines[-1]
        assert "Traceback" not in text + err
        # The node it was on, and every other, untouched.
        assert helpers.placement_rows(url) == before

        proxy.restore()
        code, text, err = _main(conf, out)
        assert code == 0, (text, err)
        assert text.strip().splitlines()[-1] == "3 migrated. Done."
    with PlacementDirect(make_conf(url)) as placement:
        expected = helpers.expected_totals(out)
        assert helpers.actual_totals(placement, expected) == expected


def test_a_database_error_is_reported_on_one_line(monkeypatch) -> None:
    def unreachable(*args, **kwargs):
        raise sa.exc.OperationalError(
            "SELECT 1\nFROM resource_providers", {}, ConnectionRefusedError(
                "connection to server at 127.0.0.1 port 5432 failed: Connection refused\n"
                "\tIs the server running on that host?"))

    monkeypatch.setattr(manage, "migrate_compute_inventory", unreachable)
    stdout, stderr = io.StringIO(), io.StringIO()
    code = manage.main(["placement", "migrate_compute_inventory", "--host-file", "hosts"],
                       out=stdout, err=stderr)
    assert code == manage.EXIT_FAILED
    assert stderr.getvalue() == (
        "nova-reshape-manage: error: database: connection to server at 127.0.0.1 port 5432 "
        "failed: Connection refused; running again is safe once the database is reachable\n")


@needs_server
@pytest.mark.parametrize("engine", SERVER_ENGINES or ["none"])
def test_a_reshape_whose_commit_answer_is_lost_is_applied_once(engine, tmp_path) -> None:
    """The first node's reshape commits, but the answer to its COMMIT is lost.

    The service runs the transaction again and finds the provider
    generations moved (409); the migration reads the node again, finds it
    already in its new shape, writes nothing more for it ("unchanged") and
    goes on: every node done once, the allocations conserved, and a re-run
    changes nothing.
    """
    url = databases.SERVERS.fresh_url(engine)
    out = str(tmp_path / "hosts")
    with PlacementDirect(make_conf(url)) as placement:
        helpers.generator.generate(placement, out, hosts=3, instances=4, kinds=())
    with TcpProxy.for_url(url, lifetime=240) as proxy:
        conf = str(tmp_path / "placement.conf")
        helpers.generator.write_config(conf, proxy.url_for(url))
        proxy.cut_after_commit(b"INSERT INTO allocations")
        code, text, err = _main(conf, out)
        assert proxy.cuts == 1, "the answer was not lost"
        assert (code, err) == (0, NOT_RUN), text
        lines = text.strip().splitlines()
        # The node read again is in its new shape: reported unchanged, not written again.
        assert lines[0].startswith("cmp-0000: unchanged"), text
        assert lines[-1] == "2 migrated, 1 unchanged. Done.", text
        migrated = helpers.placement_rows(url)
        code, text, err = _main(conf, out)
        assert (code, err) == (0, NOT_RUN), text
        assert text.strip().splitlines()[-1] == "3 unchanged. Done.", text
        assert helpers.placement_rows(url) == migrated
    with PlacementDirect(make_conf(url)) as placement:
        expected = helpers.expected_totals(out)
        assert helpers.actual_totals(placement, expected) == expected
