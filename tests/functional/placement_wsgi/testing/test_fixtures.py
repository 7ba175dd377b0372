"""APIFixture's life: the app it serves, the environment it sets and restores."""

from __future__ import annotations

import os

import pytest
import webob

from placement_wsgi.testing import fixtures
from tests.fixtures.databases import server_of


def _get(path: str, method: str = "GET") -> webob.Response:
    request = webob.Request.blank(path, method=method, headers={
        "x-auth-token": "admin", "openstack-api-version": "placement latest"})
    if method == "POST":
        request.json = {}
    return request.get_response(fixtures.setup_app())


def test_without_a_fixture_nothing_is_served() -> None:
    with pytest.raises(RuntimeError, match="must list a fixture"):
        _get("/resource_providers")


def test_the_fixture_serves_its_app_and_restores_the_environment(
        engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RP_UUID", "before")
    monkeypatch.delenv("CUSTOM_RES_CLASS", raising=False)
    bound = type("Bound", (fixtures.APIFixture,), {"database_server": server_of(engine)})
    with bound():
        assert os.environ["RP_UUID"] != "before"
        assert os.environ["CUSTOM_RES_CLASS"] == "CUSTOM_IRON_NFV"
        assert _get("/resource_providers").json == {"resource_providers": []}
        # the legacy defaults: admin may reshape, so the body is checked
        assert _get("/reshaper", method="POST").status_code == 400
    assert os.environ["RP_UUID"] == "before"
    assert "CUSTOM_RES_CLASS" not in os.environ
    with pytest.raises(RuntimeError):
        _get("/resource_providers")


def test_open_policy_opens_all_but_admin_api() -> None:
    rules = fixtures.OpenPolicyFixture().policy_file_rules()
    assert "admin_api" not in rules
    assert rules["placement:reshaper:reshape"] == "@"
