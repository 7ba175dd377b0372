"""heal_allocations' operator mistakes: one line on stderr, nova's exit status (127 for bad
input), nothing written, no database created."""

from __future__ import annotations

import pytest

from tests.fixtures import heal_cloud as hc
from tests.fixtures import nova_api_db as api_fx
from tests.functional.nova_reshape.cmd.test_heal import rows_digest, run


@pytest.fixture
def setup(tmp_path):
    with api_fx.nova_cloud("sqlite", cell2_rows=hc.cell2_rows()) as cloud:
        url, conf = hc.placement("sqlite", tmp_path / "p")
        yield cloud, url, ["--nova-config", cloud.nova_conf(tmp_path / "nova.conf"),
                           "--config-file", conf]


def one_line(err):
    lines = [line for line in err.splitlines() if "port (Neutron)" not in line]
    assert len(lines) == 1 and lines[0].startswith("nova-reshape-manage: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(("argv", "message"), [
    (["--instance", hc.PLAIN, "--cell", api_fx.CELL2_UUID], "cannot be given together"),
    (["--force"], "--force needs --instance"),
    (["--max-count", "0"], "give a positive integer"),
    (["--max-count", "many"], "give a positive integer"),
    (["--instance", "00000000-dead-4000-8000-000000000000"], "mapped to no cell"),
    (["--cell", "ce110000-0000-4000-8000-00000000dead"], "no such cell"),
])
def test_bad_options_exit_127(setup, argv, message):
    _, url, inputs = setup
    digest = rows_digest(url)
    code, _, err = run(*inputs, *argv)
    assert code == 127 and message in one_line(err)
    assert rows_digest(url) == digest


def test_no_api_database_is_127(tmp_path, setup):
    _, _, inputs = setup
    nova_conf = tmp_path / "empty.conf"
    nova_conf.write_text("[DEFAULT]\n")
    code, _, err = run("--nova-config", str(nova_conf), *inputs[2:])
    assert code == 127 and "no nova API database" in one_line(err)


def test_garbage_nova_conf_is_127(tmp_path, setup):
    _, _, inputs = setup
    garbage = tmp_path / "garbage.conf"
    garbage.write_text("this is [not an ini file\n")
    code, _, err = run("--nova-config", str(garbage), *inputs[2:])
    assert code == 127
    one_line(err)


def test_missing_api_database_file_is_not_created(tmp_path, setup):
    _, _, inputs = setup
    missing = tmp_path / "nope.sqlite"
    code, _, err = run("--nova-api-database", f"sqlite:///{missing}", *inputs)
    assert code == 127 and not missing.exists()
    one_line(err)


def test_bad_placement_configuration_is_127_and_missing_database_not_created(tmp_path, setup):
    _, _, inputs = setup
    missing = tmp_path / "placement-none.sqlite"
    conf = tmp_path / "placement.conf"
    conf.write_text(f"[placement_database]\nconnection = sqlite:///{missing}\n")
    code, _, err = run(*inputs[:2], "--config-file", str(conf))
    assert code == 127 and not missing.exists()
    one_line(err)
    code, _, err = run(*inputs[:2], "--config-file", str(tmp_path / "absent.conf"))
    assert code == 127
    one_line(err)


def test_unreachable_placement_url_is_3(setup):
    _, _, inputs = setup
    code, _, err = run(*inputs[:2], "--placement-url", "http://127.0.0.1:9/")
    assert code == 3 and "Placement" in one_line(err)
