"""``nova-reshape-scheduler capacity``: the table and its JSON document for a cloud of
nova's cells and Placement, and every operator mistake as one line and exit 2 or 3."""

from __future__ import annotations

import json

import pytest

from nova_reshape.scheduler.cmd import main
from tests.fixtures import nova_api_db
from tests.fixtures import nova_db as fx
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BadDatabase,
    assert_one_error_line,
    bad_database,
)
from tests.functional.nova_reshape.scheduler.seeding import compute_node, seed

DISABLED = "ComputeFilter: compute service is disabled (maintenance)"


@pytest.fixture
def cloud(engine, db_url, tmp_path):
    """nova's API database, two cells and a Placement database holding their nodes
    (and a root nova does not know); the controller's nova.conf."""
    seed(db_url, [compute_node(fx.CMP1_NODE, uuid=fx.CMP1_UUID),
                  compute_node(fx.CMP2_NODE, uuid=fx.CMP2_UUID),
                  compute_node(fx.CMP3_NODE, uuid=fx.CMP3_UUID, vcpu=8),
                  compute_node("stray")])
    with nova_api_db.nova_cloud(engine) as found:
        yield db_url, found.nova_conf(tmp_path / "nova.conf")


def test_json_document_for_a_flavor_computes_assumed_up(cloud, capsys):
    db_url, conf = cloud
    status = main(["capacity", "--placement-database", db_url, "--nova-config", conf,
                   "--flavor", "m1.small", "--assume-up", "--format", "json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    # m1.small (API database): 1 vCPU, 2 GB, 20 GB disk; Placement at ratio 1.0
    assert json.loads(captured.out) == {"flavors": [{"name": "m1.small", "total": 24, "hosts": [
        {"name": fx.CMP1_NODE, "valid": True, "fits": 16, "reason": ""},
        {"name": fx.CMP2_NODE, "valid": False, "fits": 0, "reason": DISABLED},
        {"name": fx.CMP3_NODE, "valid": True, "fits": 8, "reason": ""},
        {"name": "stray", "valid": False, "fits": 0,
         "reason": "not a host in nova's database: no compute node in nova's database"}]}]}


def test_table_of_the_flavors_in_use_with_stopped_computes(cloud, capsys):
    db_url, conf = cloud
    assert main(["capacity", "--placement-database", db_url, "--nova-config", conf]) == 0
    lines = capsys.readouterr().out.splitlines()
    headings = [line for line in lines if line.startswith("flavor ")]
    assert headings == [f"flavor {name}: 0 of 4 host(s) valid, 0 more fit"
                        for name in ("m1.large", "m1.small", "numa2", "p2", "p4")]
    assert any("cmp-1.example.org  -      0  ComputeFilter: compute service is down" in line
               for line in lines)


@pytest.mark.parametrize("extra, message", [
    (["--flavor", "m9"], "--flavor m9: no such flavor"),
    (["--nova-config", "/nonexistent/nova.conf"], "nova.conf: cannot read"),
    (["--flavors-file", "/nonexistent/f.yaml"], "--flavors-file /nonexistent/f.yaml"),
    (["--nova-database", "sqlite:////nonexistent/nova.db"], "nova"),
])
def test_operator_mistakes_are_one_line_and_exit_2(cloud, capsys, extra, message):
    db_url, conf = cloud
    status = main(["capacity", "--placement-database", db_url, "--nova-config", conf, *extra])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    line = assert_one_error_line(captured.err, "nova-reshape-scheduler")
    assert message in line


def test_no_flavor_source_is_exit_2(db_url, capsys):
    assert main(["capacity", "--placement-database", db_url]) == 2
    assert "no flavors to check" in capsys.readouterr().err


def test_every_wrong_placement_database_is_one_line(
        capsys: pytest.CaptureFixture, bad_database: BadDatabase,  # noqa: F811
        tmp_path_factory: pytest.TempPathFactory) -> None:
    flavors = tmp_path_factory.mktemp("flavors") / "f.yaml"
    flavors.write_text("flavors: [{name: m, vcpus: 1, memory_mb: 8}]")
    status = main(["capacity", "--placement-database", bad_database.url,
                   "--flavors-file", str(flavors)])
    captured = capsys.readouterr()
    assert status == (3 if bad_database.transient else 2) and captured.out == ""
    line = assert_one_error_line(captured.err, "nova-reshape-scheduler", bad_database)
    assert line.startswith("nova-reshape-scheduler: Placement database ")
    assert bad_database.created() == ""


def test_unreachable_placement_api_is_exit_3(tmp_path, capsys):
    flavors = tmp_path / "f.yaml"
    flavors.write_text("flavors: [{name: m, vcpus: 1, memory_mb: 8}]")
    assert main(["capacity", "--placement", "http://127.0.0.1:9", "--flavors-file",
                 str(flavors)]) == 3
    assert "cannot reach Placement" in capsys.readouterr().err
