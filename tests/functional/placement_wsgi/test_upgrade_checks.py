"""The upgrade checks on every engine: success, warning or failure on a damaged database."""

from __future__ import annotations

import json
import pathlib

import pytest
from oslo_config import cfg
from oslo_upgradecheck.upgradecheck import Code

from placement_wsgi.db.database import Database
from placement_wsgi.upgrade_checks import Checks
from tests.fixtures.config import make_conf
from tests.fixtures.pre_stein_rows import leave_pre_stein_rows

NAMES = ["Missing Root Provider IDs", "Incomplete Consumers",
         "Policy File JSON to YAML Migration"]


def results(conf: cfg.ConfigOpts, database: Database) -> dict[str, tuple[Code, str | None]]:
    checks = Checks(conf, database)
    return {name: (result.code, result.details) for name, result in (
        (name, function(checks)) for name, function in checks._upgrade_checks)}


def test_the_reference_checks_in_its_order() -> None:
    assert [name for name, _ in Checks._upgrade_checks] == NAMES


def test_a_clean_database_passes_every_check(
        conf: cfg.ConfigOpts, database: Database, capsys: pytest.CaptureFixture) -> None:
    leave_pre_stein_rows(conf.placement_database.connection, rootless=0, consumerless=0)
    assert {name: code for name, (code, _) in results(conf, database).items()} == dict.fromkeys(
        NAMES, Code.SUCCESS)
    assert Checks(conf, database).check() == Code.SUCCESS
    table = capsys.readouterr().out
    assert table.count("Result: Success") == 3 and "| Upgrade Check Results" in table


def test_providers_without_root_fail(conf: cfg.ConfigOpts, database: Database) -> None:
    leave_pre_stein_rows(conf.placement_database.connection, rootless=2, consumerless=0)
    code, details = results(conf, database)["Missing Root Provider IDs"]
    assert code == Code.FAILURE
    assert details.startswith("2 resource providers") and "online_data_migrations" in details
    assert results(conf, database)["Incomplete Consumers"][0] == Code.SUCCESS


def test_consumers_without_record_warn(conf: cfg.ConfigOpts, database: Database,
                                       capsys: pytest.CaptureFixture) -> None:
    leave_pre_stein_rows(conf.placement_database.connection, rootless=0, consumerless=3)
    code, details = results(conf, database)["Incomplete Consumers"]
    assert code == Code.WARNING
    assert details.startswith("3 consumers") and "online_data_migrations" in details
    assert Checks(conf, database).check() == Code.WARNING
    assert "Result: Warning" in capsys.readouterr().out


def test_the_worst_result_wins(conf: cfg.ConfigOpts, database: Database) -> None:
    leave_pre_stein_rows(conf.placement_database.connection, rootless=1, consumerless=1)
    assert Checks(conf, database).check() == Code.FAILURE


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("policy.json", json.dumps({"placement:reshaper:reshape": "role:admin"}), Code.FAILURE),
    ("policy.yaml", '"placement:reshaper:reshape": "role:admin"\n', Code.SUCCESS),
])
def test_a_json_policy_file_fails(db_url: str, database: Database, tmp_path: pathlib.Path,
                                  name: str, content: str, expected: Code) -> None:
    path = tmp_path / name
    path.write_text(content)
    conf = make_conf(db_url, oslo_policy={"policy_file": str(path)})
    code, details = results(conf, database)["Policy File JSON to YAML Migration"]
    assert code == expected
    assert (details is not None and "YAML" in details) == (expected == Code.FAILURE)
