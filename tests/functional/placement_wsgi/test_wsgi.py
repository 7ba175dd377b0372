"""placement_wsgi.wsgi:application under gunicorn: 4 sync worker processes.

The deployment the README documents: configuration from environment
variables only, ``sync_on_startup`` on a fresh database (so the four
workers create the schema at the same moment), then concurrent writes from
many clients, some of them racing to create the same trait. No request may
fail with a 500, and every write must be there afterwards. MariaDB is
covered by the same test when enabled, PostgreSQL and SQLite always matter
most (SQLite: several processes writing one file).
"""

from __future__ import annotations

import concurrent.futures
import importlib.metadata
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests

from tests.fixtures.config import placement_environment
from tests.fixtures.empty_databases import empty_db_url  # noqa: F401 (fixture)

WORKERS = 4
THREADS = 16
WRITES_PER_THREAD = 20
#: Every trait name is written by two threads (t and t + THREADS / 2).
DISTINCT_NAMES = THREADS * WRITES_PER_THREAD // 2
START_TIMEOUT = 90
HEADERS = {"x-auth-token": "admin", "openstack-api-version": "placement latest"}


def gunicorn_command() -> list[str]:
    script = pathlib.Path(sys.executable).parent / "gunicorn"
    if script.exists():
        return [str(script)]
    if shutil.which("gunicorn"):
        return [str(shutil.which("gunicorn"))]
    return [sys.executable, "-m", "gunicorn"]


def control_socket_option() -> list[str]:
    """gunicorn >= 25 opens ~/.gunicorn/gunicorn.ctl unless told not to."""
    try:
        major = int(importlib.metadata.version("gunicorn").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    return ["--no-control-socket"] if major >= 25 else []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Stop the master by its PID; its process group (the workers) if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # our own session: master + workers
    except (ProcessLookupError, PermissionError):
        pass
    if process.poll() is None:
        process.wait(timeout=10)


@pytest.fixture
def server(empty_db_url: str, tmp_path: pathlib.Path) -> Iterator[str]:  # noqa: F811
    """Base URL of gunicorn serving a fresh database; stopped afterwards."""
    port = free_port()
    environment = placement_environment(  # no placement.conf: environment only
        tmp_path, OS_PLACEMENT_DATABASE__CONNECTION=empty_db_url,
        OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP="True", OS_PLACEMENT_API__AUTH_STRATEGY="noauth2")
    command = gunicorn_command() + [
        "--workers", str(WORKERS), "--worker-class", "sync",
        "--bind", f"127.0.0.1:{port}", "--timeout", "120", "--graceful-timeout", "5",
        *control_socket_option(), "placement_wsgi.wsgi:application"]
    log_path = tmp_path / "gunicorn.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=tmp_path, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"gunicorn exited ({process.returncode}):\n{log_path.read_text()}")
            try:
                if requests.get(url + "/", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"no answer to GET / in {START_TIMEOUT}s:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url
    finally:
        stop(process)
    assert "Traceback" not in log_path.read_text()


def put_traits(url: str, thread: int) -> list[tuple[str, int]]:
    results = []
    with requests.Session() as session:
        for index in range(WRITES_PER_THREAD):
            number = (thread * WRITES_PER_THREAD + index) % DISTINCT_NAMES
            response = session.put(f"{url}/traits/CUSTOM_T{number}", headers=HEADERS,
                                   timeout=60)
            results.append((f"CUSTOM_T{number}", response.status_code))
    return results


def test_concurrent_writes_through_four_workers(server: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(put_traits, server, thread) for thread in range(THREADS)]
        results = [item for future in futures for item in future.result(timeout=300)]
    statuses = [status for _, status in results]
    assert len(results) == THREADS * WRITES_PER_THREAD
    assert 500 not in statuses
    assert set(statuses) <= {201, 204}
    # each name was created exactly once; the racing second PUT found it there
    assert statuses.count(201) == DISTINCT_NAMES
    listed = requests.get(f"{server}/traits?name=startswith:CUSTOM_T", headers=HEADERS,
                          timeout=60)
    assert listed.status_code == 200
    assert set(listed.json()["traits"]) == {f"CUSTOM_T{n}" for n in range(DISTINCT_NAMES)}
    for number in (0, DISTINCT_NAMES // 2, DISTINCT_NAMES - 1):
        found = requests.get(f"{server}/traits/CUSTOM_T{number}", headers=HEADERS, timeout=60)
        assert found.status_code == 204
    standard = requests.get(f"{server}/traits?name=in:HW_CPU_X86_AVX,STORAGE_DISK_SSD",
                            headers=HEADERS, timeout=60)
    assert sorted(standard.json()["traits"]) == ["HW_CPU_X86_AVX", "STORAGE_DISK_SSD"]
