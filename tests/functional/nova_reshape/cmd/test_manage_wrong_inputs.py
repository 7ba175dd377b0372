"""nova-reshape-manage migrate_compute_inventory on a wrong Placement database or
configuration: one line, its exit status, a JSON error with --format json, nothing
created; the journal's commands in-process (``placement runs``, ``placement
revert``) likewise; on every enabled engine. In-process ``main()`` calls."""

from __future__ import annotations

import io
import json
import os
import pathlib

import pytest

from nova_reshape.cmd import manage
from tests.fixtures.bad_databases import (  # noqa: F401 (fixture)
    BAD_CONFIG_FILES,
    BadDatabase,
    assert_one_error_line,
    bad_database,
)

HOST = ("version: 1\nhost: h\nnodes:\n- nodename: h\n"
        "  uuid: 10000000-0000-4000-8000-000000000001\n  hypervisor_type: QEMU\n")


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = manage.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _migrate(directory: pathlib.Path, config: bytes, *extra: str) -> tuple[int, str, str]:
    """The migration with ``config`` as placement.conf; its inputs are written to
    ``directory`` (keep it apart from where a test looks for created files)."""
    hosts = directory / "host.yaml"
    hosts.write_text(HOST)
    conf = directory / "placement.conf"
    conf.write_bytes(config)
    return _main("--config-file", str(conf), "placement", "migrate_compute_inventory",
                 "--host-file", str(hosts), *extra)


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_every_wrong_placement_database_is_one_line_before_anything_else(
        tmp_path_factory: pytest.TempPathFactory, bad_database: BadDatabase,  # noqa: F811
        output_format: str) -> None:
    config = f"[placement_database]\nconnection = {bad_database.url}\n".encode()
    code, out, err = _migrate(tmp_path_factory.mktemp("inputs"), config, "--format",
                              output_format)
    expected = manage.EXIT_FAILED if bad_database.transient else manage.EXIT_BAD_INPUT
    assert code == expected
    line = assert_one_error_line(err, "nova-reshape-manage", bad_database)
    assert line.startswith("nova-reshape-manage: error: database ")
    if output_format == "json":
        document = json.loads(out)
        assert document["exit_code"] == expected
        assert document["error"] == line[len("nova-reshape-manage: error: "):]
        assert document["findings"] == []
    else:
        assert out == ""
    assert bad_database.created() == ""


JOURNAL_COMMANDS = [("runs",), ("runs", "show", "x"), ("revert", "x"),
                    ("revert", "x", "--dry-run")]


@pytest.mark.parametrize("argv", JOURNAL_COMMANDS, ids=" ".join)
def test_the_journal_commands_on_a_wrong_placement_database_are_one_line(
        tmp_path_factory: pytest.TempPathFactory, bad_database: BadDatabase,  # noqa: F811
        argv: tuple[str, ...]) -> None:
    conf = tmp_path_factory.mktemp("inputs") / "placement.conf"
    conf.write_text(f"[placement_database]\nconnection = {bad_database.url}\n")
    code, out, err = _main("--config-file", str(conf), "placement", *argv)
    expected = manage.EXIT_FAILED if bad_database.transient else manage.EXIT_BAD_INPUT
    assert (code, out) == (expected, "")
    line = assert_one_error_line(err, "nova-reshape-manage", bad_database)
    assert line.startswith("nova-reshape-manage: error: database ")
    assert bad_database.created() == ""


@pytest.mark.parametrize("argv", JOURNAL_COMMANDS, ids=" ".join)
def test_a_misspelt_engine_is_one_line_and_bad_input(tmp_path: pathlib.Path,
                                                    argv: tuple[str, ...]) -> None:
    conf = tmp_path / "placement.conf"
    conf.write_text("[placement_database]\nconnection = postgrs://placement@db/placement\n")
    code, out, err = _main("--config-file", str(conf), "placement", *argv)
    assert (code, out) == (manage.EXIT_BAD_INPUT, "")
    line = assert_one_error_line(err, "nova-reshape-manage")
    assert "unsupported database 'postgrs'" in line
    assert os.listdir(tmp_path) == ["placement.conf"]


@pytest.mark.parametrize(("content", "fragment"), BAD_CONFIG_FILES)
def test_a_bad_config_file_is_one_line_and_bad_input(
        tmp_path: pathlib.Path, content: bytes, fragment: str) -> None:
    code, out, err = _migrate(tmp_path, content)
    assert (code, out) == (manage.EXIT_BAD_INPUT, "")
    assert fragment in assert_one_error_line(err, "nova-reshape-manage")


def test_a_nova_conf_of_random_bytes_is_one_line(tmp_path: pathlib.Path) -> None:
    nova_conf = tmp_path / "nova.conf"
    nova_conf.write_bytes(b"\x97\xff\x00\x01 random bytes \xfe")
    hosts = tmp_path / "host.yaml"
    hosts.write_text(HOST)
    code, out, err = _main("placement", "migrate_compute_inventory", "--host-file",
                           str(hosts), "--nova-config", str(nova_conf), "--print-nova-config")
    assert (code, out) == (manage.EXIT_BAD_INPUT, "")
    line = assert_one_error_line(err, "nova-reshape-manage")
    assert f"{nova_conf}: not a text file" in line
