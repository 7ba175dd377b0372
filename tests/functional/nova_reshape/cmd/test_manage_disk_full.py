"""The migration command on an SQLite Placement database whose disk is full.

A 2 MB tmpfs holds the database (skipped, with the reason, where one cannot
be mounted). Full before the run: one line on standard error, exit 1,
nothing changed. Full in the middle of the first node's write: that node's
line says so, the later nodes are not run, exit 1, nothing half-written.
Either way the same command run again once space is freed migrates every
node.
"""

from __future__ import annotations

import io

import pytest
import sqlalchemy as sa

from nova_reshape.cmd import manage
from nova_reshape.cmd.consistency_check import NOT_RUN  # host files only: said once
from placement_wsgi.cmd import manage as placement_manage
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.fixtures.small_disk import SmallDisk, small_disk
from tests.functional.nova_reshape import migrate_helpers as helpers


@pytest.fixture
def deployment(tmp_path, capsys):
    """(disk, config file, host file, URL): 2 hosts generated on a synced database."""
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite:///{disk.path / 'placement.sqlite'}"
        conf = str(tmp_path / "placement.conf")
        helpers.generator.write_config(conf, url)
        assert placement_manage.main(["--config-file", conf, "db", "sync"]) == 0
        capsys.readouterr()
        hosts = str(tmp_path / "hosts")
        with PlacementDirect(make_conf(url)) as placement:
            helpers.generator.generate(placement, hosts, hosts=2, instances=4, kinds=())
        yield disk, conf, hosts, url


def _main(conf: str, hosts: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = manage.main(["--config-file", conf, "placement", "migrate_compute_inventory",
                        "--host-file", hosts], out=stdout, err=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def _unchanged_then_rerun_completes(disk: SmallDisk, conf: str, hosts: str, url: str,
                                    before: tuple[list, list]) -> None:
    """Space freed: the failed run changed no row; the same command completes."""
    disk.free()
    assert helpers.placement_rows(url) == before  # read once there is space to open the file
    code, text, err = _main(conf, hosts)
    assert (code, err) == (0, NOT_RUN), text
    assert text.strip().splitlines()[-1] == "2 migrated. Done."
    with PlacementDirect(make_conf(url)) as placement:
        expected = helpers.expected_totals(hosts)
        assert helpers.actual_totals(placement, expected) == expected


def test_a_full_disk_before_the_run_is_one_line(deployment) -> None:
    disk, conf, hosts, url = deployment
    before = helpers.placement_rows(url)
    disk.fill()
    code, text, err = _main(conf, hosts)
    assert code == manage.EXIT_FAILED, (text, err)
    assert text == ""
    assert err == (f"nova-reshape-manage: error: database {url}: its disk is full (disk I/O "
                   "error); free space on it; running again is safe once there is space\n")
    _unchanged_then_rerun_completes(disk, conf, hosts, url, before)


def test_a_disk_full_mid_write_leaves_the_node_as_it_was(deployment) -> None:
    disk, conf, hosts, url = deployment
    before = helpers.placement_rows(url)
    filled: list[int] = []

    def fill_at_first_allocation(conn, cursor, statement, *args) -> None:
        if not filled and "INSERT INTO allocations" in statement:
            filled.append(disk.fill())

    sa.event.listen(sa.Engine, "before_cursor_execute", fill_at_first_allocation)
    try:
        code, text, err = _main(conf, hosts)
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", fill_at_first_allocation)
    assert filled, "the disk was not filled"
    # The consistency check's one line (host files only), then the journal's: it
    # cannot record the run's end on the full disk.
    assert code == manage.EXIT_FAILED, text
    assert err.startswith(NOT_RUN), err
    journal_line = err[len(NOT_RUN):]
    assert journal_line.startswith("warning: the journal could not record how run ") and \
        journal_line.endswith("`placement runs` shows it running; its node entries are exact\n")
    assert journal_line.count("\n") == 1
    lines = text.strip().splitlines()
    assert lines[0].startswith("cmp-0000: failed, 4 allocation changes"), text
    assert lines[0].endswith("The database is out of space; nothing was changed. Free space "
                             "on the database's disk, then try again."), text
    assert lines[1].startswith("cmp-0001: not-run"), text
    assert lines[2] == ("1 failed, 1 not-run. A node failed; the nodes before it are done; "
                        "run again after fixing.")
    assert len(lines) == 3 and "Traceback" not in text
    _unchanged_then_rerun_completes(disk, conf, hosts, url, before)
