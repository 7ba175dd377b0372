"""``--report``: the run's facts from the request, passwords hidden; the outcome's words."""

from __future__ import annotations

import json

import pytest

from nova_reshape.cmd import report_file
from nova_reshape.cmd.refusal import ExitClass, Refusal
from nova_reshape.cmd.request import HostFiles, MigrateRequest, NovaDatabase, PlacementAccess


def test_inputs_name_each_source_and_hide_database_passwords():
    request = MigrateRequest(
        placement=PlacementAccess(config_files=("placement.conf",)),
        hosts=NovaDatabase("mysql+pymysql://nova:secret@db/nova_cell1", "collected/",
                           "mysql+pymysql://cyborg:hush@db/cyborg"),
        nova_configs=("nova.conf",))
    inputs = report_file.inputs_of(request)
    assert inputs == (("nova database", "mysql+pymysql://nova:***@db/nova_cell1"),
                      ("collected", "collected/"),
                      ("cyborg database", "mysql+pymysql://cyborg:***@db/cyborg"),
                      ("nova.conf", "nova.conf"), ("placement.conf", "placement.conf"))
    http = MigrateRequest(placement=PlacementAccess(url="http://placement:8778", token="t"),
                          hosts=HostFiles(("a.yaml", "hosts/")))
    assert report_file.inputs_of(http) == (("host file", "a.yaml"), ("host file", "hosts/"),
                                           ("placement URL", "http://placement:8778"))
    facts = report_file.facts_of(http)
    assert facts.target.startswith("nova ") and not facts.dry_run


def test_outcome_words():
    assert report_file.outcome(0, dry_run=True).verdict == "dry run: nothing changed"
    refused = report_file.outcome(3, dry_run=False)
    assert (refused.exit_class, refused.verdict.split(":")[0]) == (
        "refused", "refused by the pre-flight checks")


def test_no_report_without_the_option_and_json_by_extension(tmp_path):
    request = MigrateRequest(placement=PlacementAccess(), hosts=HostFiles(("h",)))
    with report_file.open_report(request) as report:
        assert report is None
    path = tmp_path / "run.json"
    with report_file.open_report(
            MigrateRequest(placement=PlacementAccess(), hosts=HostFiles(("h",)),
                           report=str(path))) as report:
        report.close(report_file.outcome(0, dry_run=False))
    document = json.loads(path.read_text())
    assert document["run"]["inputs"] == [["host file", "h"]] and document["nodes"] == []


def test_every_cell_is_named_by_the_api_database_and_the_cells_asked_for():
    request = MigrateRequest(
        placement=PlacementAccess(config_files=("placement.conf",)),
        hosts=NovaDatabase(api_url="mysql+pymysql://nova:secret@db/nova_api",
                           cells=("cell1",)))
    assert report_file.inputs_of(request)[:2] == (
        ("nova API database", "mysql+pymysql://nova:***@db/nova_api"), ("cell", "cell1"))


def test_a_report_file_that_cannot_be_written_is_refused_before_anything(tmp_path):
    report_file.check_report_path(None)
    report_file.check_report_path(str(tmp_path / "run.html"))
    for path, words in ((tmp_path / "gone" / "run.html", "does not exist"),
                        (tmp_path, "is a directory")):
        with pytest.raises(Refusal) as refused:
            report_file.check_report_path(str(path))
        assert refused.value.exit_class is ExitClass.BAD_INPUT
        assert words in str(refused.value) and str(path) in str(refused.value)
    assert list(tmp_path.iterdir()) == []
