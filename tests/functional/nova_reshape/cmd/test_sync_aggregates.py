"""``placement sync_aggregates`` as an operator runs it, on every enabled engine.

nova's API database puts cmp-1 (cell1) in ``az1`` and ``fast`` and cmp-3
(cell2) in ``az1``; Placement has cmp-1 in an aggregate of its own only and
cmp-3 already in ``az1`` (tests/fixtures/consistency.py). Each test asserts
Placement's aggregates, the providers' generations and the exit status.
"""

from __future__ import annotations

import contextlib

import pytest

from tests.fixtures import consistency as cx
from tests.fixtures import nova_api_db as api_fx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse)
from tests.functional.nova_reshape.cmd.test_from_nova import run

AZ1, FAST = api_fx.AZ1_UUID, api_fx.FAST_UUID
DEFAULT_HOSTS = [(fx.CMP1, "cell1"), (fx.CMP2, "cell1"), (fx.IRONIC_HOST, "cell1"),
                 (fx.CMP3, "cell2")]


def sync(damaged, *argv):
    return run("--config-file", damaged.placement_conf, "placement", "sync_aggregates",
               "--nova-config", damaged.nova_conf, *argv)


@contextlib.contextmanager
def damaged(engine, tmp_path, aggregates=None, **cloud_args):
    """The damaged cloud with ``aggregates`` (default cx.HOST_AGGREGATES) in nova."""
    with cx.damaged_cloud(engine, tmp_path, seed=cx.seed_sync, **cloud_args) as cloud:
        cx.host_aggregates(cloud.cloud.api_url, aggregates)
        yield cloud


@pytest.fixture
def cloud(engine, tmp_path):
    with damaged(engine, tmp_path) as made:
        yield made


def test_adds_what_is_missing_keeps_the_rest_and_a_second_run_writes_nothing(cloud):
    generation = cx.generation(cloud.placement_url, fx.CMP1_UUID)
    code, out, err = sync(cloud, "--verbose")
    assert (code, err) == (0, ""), out + err
    *lines, journaled = out.splitlines()
    assert lines == [
        f"added: host {fx.CMP1} (provider {fx.CMP1_UUID}) to aggregate az1 ({AZ1})",
        f"added: host {fx.CMP1} (provider {fx.CMP1_UUID}) to aggregate fast ({FAST})",
        "2 provider aggregate membership(s) added"]
    assert journaled.startswith("journaled as run ")
    assert cx.provider_aggregates(cloud.placement_url) == {
        fx.CMP1_UUID: {cx.PLACEMENT_ONLY, AZ1, FAST}, fx.CMP3_UUID: {AZ1}}
    # One PUT per aggregate added, as nova writes them.
    assert cx.generation(cloud.placement_url, fx.CMP1_UUID) == generation + 2
    digest = cx.rows_digest(cloud.placement_url)
    assert sync(cloud) == (0, "0 provider aggregate membership(s) added\n", "")
    assert cx.rows_digest(cloud.placement_url) == digest


@pytest.mark.parametrize("host, mapped, code, line", [
    ("cmp-9", False, 4, "hosts in host aggregates without a host mapping in nova's API "
     "database (run 'nova-manage cell_v2 discover_hosts'): cmp-9"),
    ("cmp-9", True, 5, "hosts without a compute node in their cell's database (start their "
     "nova-compute once): cmp-9"),
    (fx.IRONIC_HOST, True, 6, "compute nodes without a resource provider in Placement "
     f"(start their nova-compute, or run migrate_compute_inventory): "
     f"{fx.IRONIC_HOST}={fx.IRONIC_UUID}"),
])
def test_a_host_it_cannot_mirror_is_named_and_the_others_are_done(engine, tmp_path, host,
                                                                   mapped, code, line):
    hosts = DEFAULT_HOSTS + ([(host, "cell1")] if mapped and host == "cmp-9" else [])
    wanted = dict(cx.HOST_AGGREGATES, fast=(FAST, [host, fx.CMP1]))
    with damaged(engine, tmp_path, wanted, hosts=hosts) as made:
        result = sync(made)
        assert result[0] == code, result
        assert result[2] == f"nova-reshape-manage: {line}\n"
        assert cx.provider_aggregates(made.placement_url) == {
            fx.CMP1_UUID: {cx.PLACEMENT_ONLY, AZ1, FAST}, fx.CMP3_UUID: {AZ1}}


def test_a_host_with_two_compute_nodes_stops_the_run_there(engine, tmp_path):
    rows = fx.second_cell_rows()
    rows[fx.compute_nodes].append(fx.compute_row(2, fx.CMP3, "cmp-3b.example.org",
                                                 "c0000000-0000-4000-8000-0000000000b2"))
    with damaged(engine, tmp_path, cell2_rows=rows) as made:
        code, out, err = sync(made)
        assert code == 1, out + err
        assert err == ("nova-reshape-manage: host cmp-3 has 2 compute nodes; which one belongs "
                       "in its aggregates is for the operator to settle; stopped there\n")
        # az1's hosts are visited in name order: cmp-1 was added before cmp-3 stopped it.
        assert cx.provider_aggregates(made.placement_url) == {
            fx.CMP1_UUID: {cx.PLACEMENT_ONLY, AZ1}, fx.CMP3_UUID: {AZ1}}


def test_one_cell_leaves_the_other_cells_hosts_alone(cloud):
    code, out, err = sync(cloud, "--cell", "cell2")
    assert code == 0, out + err
    assert err == ("nova-reshape-manage: warning: hosts in cells not read (--cell) left "
                   f"alone: {fx.CMP1}\n")
    assert cx.provider_aggregates(cloud.placement_url) == {
        fx.CMP1_UUID: {cx.PLACEMENT_ONLY}, fx.CMP3_UUID: {AZ1}}


def test_over_http_the_same(cloud):
    with cx.served(cloud.placement_url) as url:
        code, out, err = run("placement", "sync_aggregates", "--placement-url", url,
                             "--token", "admin", "--nova-config", cloud.nova_conf)
    assert code == 0, out + err
    assert cx.provider_aggregates(cloud.placement_url) == {
        fx.CMP1_UUID: {cx.PLACEMENT_ONLY, AZ1, FAST}, fx.CMP3_UUID: {AZ1}}


@pytest.mark.parametrize("argv, line", [
    (("--nova-api-database", "sqlite:////nonexistent/nova_api.sqlite"), "nova API database"),
    (("--cell", "cell0"), "--cell cell0: cell0 holds no compute hosts"),
])
def test_operator_mistakes_are_one_line_and_exit_2(cloud, argv, line):
    digest = cx.rows_digest(cloud.placement_url)
    code, out, err = sync(cloud, *argv)
    assert code == 2, out + err
    assert len(err.splitlines()) == 1 and line in err, err
    assert cx.rows_digest(cloud.placement_url) == digest
