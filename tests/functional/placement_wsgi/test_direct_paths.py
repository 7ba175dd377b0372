"""Odd paths through PlacementDirect get the answers the HTTP path gives.

Regression for issue 15: in-process, a path with a non-Latin-1 character
made the outer error handler raise instead of answering 404, and a path
that is not UTF-8 escaped as ``wsgi_intercept.WSGIAppError``.
"""

from __future__ import annotations

import webob

from placement_wsgi import deploy
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf


def _assert_error(response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["errors"][0]
    assert error["status"] == status
    assert error["code"] == "placement.undefined_code"
    return error


def test_non_latin1_paths_are_404_through_placement_direct(db_url) -> None:
    with PlacementDirect(make_conf(db_url), latest_microversion=True) as placement:
        _assert_error(placement.get("/resources_providers/%e2%98%83"), 404)
        error = _assert_error(placement.get("/resource_providers/%e2%98%83"), 404)
        assert "\u2603" in error["detail"]


def test_a_path_that_is_not_utf8_is_400_through_placement_direct(db_url) -> None:
    with PlacementDirect(make_conf(db_url), latest_microversion=True) as placement:
        error = _assert_error(placement.get("/resource_providers/%ff"), 400)
        assert "The request path is not valid UTF-8" in error["detail"]


def test_a_decoded_path_from_an_in_process_caller_is_404(db_url) -> None:
    """PATH_INFO holding decoded text (not PEP 3333's latin-1) is read as UTF-8."""
    app = deploy.loadapp(make_conf(db_url))
    try:
        for path in ("/resources_providers/\u2603", "/resource_providers/\u2603"):
            request = webob.Request.blank("/", headers={
                "x-auth-token": "admin", "openstack-api-version": "placement latest"})
            request.environ["PATH_INFO"] = path
            response = request.get_response(app)
            assert response.status_int == 404, (path, response.body)
            assert response.json["errors"][0]["status"] == 404
    finally:
        app.placement_app.database.dispose()
