"""placement-api: the development server starts, says where, serves, stops on SIGTERM."""

from __future__ import annotations

import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import requests

from placement_wsgi.cmd import api
from tests.fixtures.config import placement_environment


def command(*argv: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from placement_wsgi.cmd.api import main; "
            "sys.exit(main())", *argv]


def test_serves_on_the_printed_address_and_stops_on_sigterm(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "api.conf"
    config.write_text(f"[placement_database]\nconnection = sqlite:///{tmp_path / 'a.sqlite'}\n"
                      "sync_on_startup = true\n[api]\nauth_strategy = noauth2\n")
    process = subprocess.Popen(
        command("--config-file", str(config), "--port", "0"), env=placement_environment(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()  # the server prints this once it listens
        match = re.match(r"placement-api: serving (http://127\.0\.0\.1:(\d+)/) ", line)
        if not match:
            process.kill()
            pytest.fail(f"unexpected first line {line!r}; stderr: {process.communicate()[1]}")
        assert "auth noauth2" in line
        url = match.group(1)
        assert requests.get(url, timeout=30).json()["versions"][0]["id"] == "v1.0"
        created = requests.put(url + "traits/CUSTOM_DEV", timeout=30, headers={
            "x-auth-token": "admin", "openstack-api-version": "placement latest"})
        assert created.status_code == 201
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_missing_connection_is_one_line_and_status_1(tmp_path: pathlib.Path) -> None:
    result = subprocess.run(command("--port", "0"), env=placement_environment(tmp_path),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("placement-api: error: configuration error: "
                               "[placement_database] connection is not set")


def test_port_in_use_is_one_line_and_status_1(tmp_path: pathlib.Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = subprocess.run(
            command("--port", str(port)),
            env=placement_environment(tmp_path, OS_PLACEMENT_DATABASE__CONNECTION=(
                f"sqlite:///{tmp_path / 'b.sqlite'}"), OS_PLACEMENT_API__AUTH_STRATEGY="noauth2"),
            capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 120
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"placement-api: error: cannot listen on 127.0.0.1:{port}: Address already in use")


def test_defaults_are_loopback_and_8778() -> None:
    args = api.build_parser().parse_args([])
    assert (args.host, args.port, args.config_files) == ("127.0.0.1", 8778, None)
    args = api.build_parser().parse_args(["--config-file", "a", "--config-file", "b"])
    assert args.config_files == ["a", "b"]


def test_port_out_of_range_is_usage_error(capsys: pytest.CaptureFixture) -> None:
    assert api.main(["--port", "70000"]) == 2
    assert "out of range" in capsys.readouterr().err
