"""Building apps: deploy.loadapp (see docs/architecture.md), service start-up, the WSGI module.

Several apps live side by side in one process, each bound to its own
configuration and database; start-up problems are one clear line.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import webob

from placement_wsgi import deploy, service
from placement_wsgi.db import migration
from tests.fixtures.config import make_conf, placement_environment
from tests.fixtures.empty_databases import empty_db_url  # noqa: F401 (fixture)

HEADERS = {"x-auth-token": "admin", "openstack-api-version": "placement latest"}


def call(app, method: str, path: str) -> webob.Response:
    request = webob.Request.blank(path, method=method, headers=HEADERS)
    return request.get_response(app)


def trait_names(app) -> set[str]:
    response = call(app, "GET", "/traits")
    assert response.status_int == 200
    return set(response.json["traits"])


@pytest.fixture
def apps(conf, tmp_path: pathlib.Path):
    """One app on the engine under test, one on a separate SQLite file."""
    other = make_conf(f"sqlite:///{tmp_path / 'other.sqlite'}",
                      placement_database={"sync_on_startup": True})
    first, second = deploy.loadapp(conf), deploy.loadapp(other)
    yield first, second
    for app in (first, second):
        app.placement_app.database.dispose()


def test_two_apps_in_one_process_see_their_own_data(apps) -> None:
    first, second = apps
    assert call(first, "PUT", "/traits/CUSTOM_ONLY_FIRST").status_int == 201
    assert call(second, "PUT", "/traits/CUSTOM_ONLY_SECOND").status_int == 201
    assert call(first, "GET", "/traits/CUSTOM_ONLY_FIRST").status_int == 204
    assert call(first, "GET", "/traits/CUSTOM_ONLY_SECOND").status_int == 404
    assert call(second, "GET", "/traits/CUSTOM_ONLY_SECOND").status_int == 204
    assert call(second, "GET", "/traits/CUSTOM_ONLY_FIRST").status_int == 404
    assert call(first, "DELETE", "/traits/CUSTOM_ONLY_FIRST").status_int == 204
    assert call(second, "GET", "/traits/CUSTOM_ONLY_SECOND").status_int == 204


def test_apps_keep_their_own_options(conf, tmp_path: pathlib.Path) -> None:
    cors_conf = make_conf(f"sqlite:///{tmp_path / 'c.sqlite'}",
                          cors={"allowed_origin": ["http://ui.example"]},
                          placement_database={"sync_on_startup": True})
    plain_app = deploy.loadapp(conf)
    cors_app = deploy.loadapp(cors_conf)
    try:
        assert plain_app.placement_app.conf is conf
        assert cors_app.placement_app.conf is cors_conf
        headers = {"Origin": "http://ui.example", "Access-Control-Request-Method": "GET"}
        responses = [webob.Request.blank("/", method="OPTIONS", headers=headers).get_response(app)
                     for app in (plain_app, cors_app)]
        assert "Access-Control-Allow-Origin" not in responses[0].headers
        assert responses[1].headers["Access-Control-Allow-Origin"] == "http://ui.example"
    finally:
        plain_app.placement_app.database.dispose()
        cors_app.placement_app.database.dispose()


def test_sync_on_startup_prepares_an_empty_database(empty_db_url: str) -> None:  # noqa: F811
    conf = make_conf(empty_db_url, placement_database={"sync_on_startup": True})
    app = deploy.loadapp(conf)
    try:
        database = app.placement_app.database
        assert migration.current_revision(database) == migration.head_revision()
        names = trait_names(app)
        assert {"HW_CPU_X86_AVX", "STORAGE_DISK_SSD", "MISC_SHARES_VIA_AGGREGATE"} <= names
        assert call(app, "PUT", "/traits/CUSTOM_AFTER_SYNC").status_int == 201
    finally:
        app.placement_app.database.dispose()


def test_loadapp_without_sync_leaves_an_empty_database_alone(
        empty_db_url: str) -> None:  # noqa: F811
    app = deploy.loadapp(make_conf(empty_db_url))
    try:
        assert migration.current_revision(app.placement_app.database) is None
    finally:
        app.placement_app.database.dispose()


def test_loadapp_without_connection_is_a_configuration_error() -> None:
    with pytest.raises(deploy.ConfigurationError, match=r"\[placement_database\] connection"):
        deploy.loadapp(make_conf(""))


def test_build_application_without_connection_is_one_line() -> None:
    with pytest.raises(service.StartupError) as raised:
        service.build_application(make_conf(""))
    assert "\n" not in str(raised.value)
    assert "[placement_database] connection is not set" in str(raised.value)


def test_build_application_reports_an_unreachable_database(tmp_path: pathlib.Path) -> None:
    conf = make_conf(f"sqlite:///{tmp_path / 'missing-dir' / 'db.sqlite'}",
                     placement_database={"max_retries": 1, "retry_interval": 0})
    with pytest.raises(service.StartupError, match="cannot connect to database"):
        service.build_application(conf)


def _import_wsgi(environment: dict[str, str]) -> subprocess.CompletedProcess:
    code = ("import webob; from placement_wsgi.wsgi import application; "
            "print(webob.Request.blank('/').get_response(application).status)")
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, timeout=120)


def test_wsgi_module_without_connection_exits_with_one_clear_line(
        tmp_path: pathlib.Path) -> None:
    result = _import_wsgi(placement_environment(tmp_path))
    assert result.returncode == 3
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if "connection is not set" in line]
    assert len(lines) == 1
    assert "OS_PLACEMENT_DATABASE__CONNECTION" in lines[0]


def test_wsgi_module_reads_the_config_dir_file_and_environment(
        tmp_path: pathlib.Path) -> None:
    database = tmp_path / "wsgi.sqlite"
    (tmp_path / "placement.conf").write_text(
        f"[placement_database]\nconnection = sqlite:///{database}\n"
        "[api]\nauth_strategy = noauth2\n")
    result = _import_wsgi(placement_environment(
        tmp_path, OS_PLACEMENT_DATABASE__SYNC_ON_STARTUP="True"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("200 OK")
    assert database.exists()
    app = deploy.loadapp(make_conf(f"sqlite:///{database}"))
    try:
        assert migration.current_revision(app.placement_app.database) == (
            migration.head_revision())
    finally:
        app.placement_app.database.dispose()
