"""``placement audit`` as an operator runs it, on every enabled engine.

The cloud and its damaged Placement are tests/fixtures/consistency.py's:
allocations of a deleted instance, of an instance that moved host (to
another cell), of a confirmed migration, of a consumer nova never had on a
root and its child, a sharing storage provider's, a ``finished`` resize's
(kept) and a custom class's only (ignored). Each test asserts Placement's
rows and the exit status.
"""

from __future__ import annotations

import pytest

from nova_reshape.cmd.nova_cells import NO_DATABASE
from tests.fixtures import consistency as cx
from tests.fixtures import nova_db as fx
from tests.fixtures.config import clean_environment  # noqa: F401 (autouse)
from tests.functional.nova_reshape.cmd.test_from_nova import run


def audit(damaged, *argv):
    return run("--config-file", damaged.placement_conf, "placement", "audit",
               "--nova-config", damaged.nova_conf, *argv)


def test_finds_every_orphan_and_writes_nothing(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        digest = cx.rows_digest(damaged.placement_url)
        code, out, err = audit(damaged, "--verbose")
        assert code == 3, out + err
        found = [line for line in out.splitlines() if line.startswith("orphaned: ")]
        assert [(line.split()[5].rstrip(":"), line.split()[2]) for line in found] == cx.ORPHANS
        assert f"consumer {fx.SPREAD} on provider {cx.SHARED} (no compute node)" in out
        assert f"provider {cx.GPU_CHILD} (root {fx.CMP1_UUID})" in out
        assert out.splitlines()[-1] == ("6 orphaned allocation(s) of 5 consumer(s) on 4 "
                                        "provider(s); --delete deletes them")
        assert cx.rows_digest(damaged.placement_url) == digest
        assert cx.held(damaged.placement_url) == cx.before_delete()


def test_delete_removes_them_as_nova_does_and_a_second_run_is_clean(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        code, out, err = audit(damaged, "--delete")
        assert code == 4, out + err
        summary, journaled = out.splitlines()
        assert summary == "6 orphaned allocation(s) of 5 consumer(s) on 4 provider(s): deleted"
        assert journaled.startswith("journaled as run ")
        assert cx.held(damaged.placement_url) == cx.AFTER_DELETE
        digest = cx.rows_digest(damaged.placement_url)
        code, out, err = audit(damaged, "--delete")
        assert (code, out, err) == (0, "no orphaned allocations\n", "")
        assert cx.rows_digest(damaged.placement_url) == digest


def test_one_provider_only(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        code, out, err = audit(damaged, "--resource_provider", cx.SHARED, "--delete", "-v")
        assert code == 4, out + err
        assert out.splitlines()[0].startswith(f"orphaned: consumer {fx.SPREAD} on provider "
                                              f"{cx.SHARED}")
        expected = cx.before_delete()
        expected[fx.SPREAD] = cx.AFTER_DELETE[fx.SPREAD]
        assert cx.held(damaged.placement_url) == expected


@pytest.mark.parametrize("uuid", ["d0d0d0d0-0000-4000-8000-000000000000", "not-a-uuid"])
def test_an_unknown_provider_is_127(engine, tmp_path, uuid):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        digest = cx.rows_digest(damaged.placement_url)
        code, out, err = audit(damaged, "--resource_provider", uuid, "--delete")
        assert (code, out) == (127, "")
        assert err == f"nova-reshape-manage: resource provider {uuid} does not exist\n"
        assert cx.rows_digest(damaged.placement_url) == digest


def test_one_cell_audits_only_its_compute_nodes(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        code, out, err = audit(damaged, "--cell", "cell2", "--delete")
        assert (code, out) == (0, "no orphaned allocations\n")
        assert "only providers under the compute nodes of the cells read" in err
        code, out, err = audit(damaged, "--cell", "cell1")
        assert code == 3
        assert out.startswith("5 orphaned allocation(s) of 4 consumer(s) on 3 provider(s)")


def test_over_http_the_same_findings_and_deletions(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged, \
            cx.served(damaged.placement_url) as url:
        code, out, err = run("placement", "audit", "--placement-url", url, "--token", "admin",
                             "--nova-config", damaged.nova_conf, "--delete")
        assert code == 4, out + err
        assert cx.held(damaged.placement_url) == cx.AFTER_DELETE


@pytest.mark.parametrize("argv, line", [
    (("--nova-api-database", "sqlite:////nonexistent/nova_api.sqlite"),
     "nova API database"),
    (("--cell", "cell9"), "--cell cell9: no such cell"),
    (("--placement-url", "http://127.0.0.1:9", "--config-file", "x.conf"),
     "give either --config-file or --placement-url"),
])
def test_operator_mistakes_are_one_line_and_exit_2(engine, tmp_path, argv, line):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        digest = cx.rows_digest(damaged.placement_url)
        code, out, err = audit(damaged, *argv)
        assert code == 2, out + err
        assert len(err.splitlines()) == 1 and line in err, err
        assert cx.rows_digest(damaged.placement_url) == digest


def test_without_any_nova_database_it_says_what_to_give(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        code, out, err = run("placement", "audit", "--config-file", damaged.placement_conf)
        assert (code, out) == (2, "")
        assert err == "nova-reshape-manage: error: " + NO_DATABASE + "\n"


@pytest.mark.parametrize("content", ["garbage[[[\n", None])
def test_an_unusable_placement_conf_is_one_line_and_creates_nothing(tmp_path, content):
    conf = tmp_path / "placement.conf"
    if content:
        conf.write_text(content)
    else:
        conf.write_text(f"[placement_database]\nconnection = sqlite:///{tmp_path}/no.sqlite\n")
    code, out, err = run("placement", "audit", "--config-file", str(conf))
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1, err
    assert not (tmp_path / "no.sqlite").exists()


def test_placement_down_over_http_is_one_line_and_exit_1(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged:
        code, out, err = run("placement", "audit", "--placement-url", "http://127.0.0.1:9",
                             "--nova-config", damaged.nova_conf)
        assert code == 1, out + err
        assert len(err.splitlines()) == 1, err


def test_over_http_a_token_without_rights_is_one_line_and_exit_2(engine, tmp_path):
    with cx.damaged_cloud(engine, tmp_path) as damaged, \
            cx.served(damaged.placement_url) as url:
        code, out, err = run("placement", "audit", "--placement-url", url, "--token", "nobody",
                             "--nova-config", damaged.nova_conf, "--delete")
        assert (code, out) == (2, "")
        assert len(err.splitlines()) == 1 and "may not read the provider trees" in err, err
        assert cx.held(damaged.placement_url) == cx.before_delete()
