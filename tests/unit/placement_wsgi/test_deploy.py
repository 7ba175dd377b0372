"""The fault wrapper answers every request and never raises itself.

Regression for issue 15: with a path holding a character outside Latin-1
(what an in-process caller may put in PATH_INFO), building the log line of
an unexpected error raised UnicodeEncodeError out of the error handler, so
the caller got an exception instead of a response.
"""

from __future__ import annotations

import json
import logging

import webob

from placement_wsgi import errors
from placement_wsgi.deploy import FaultWrapper


def _failing_app(environ, start_response):
    raise RuntimeError("boom")


def _path_echo_app(environ, start_response):
    request = webob.Request(environ)
    response = webob.Response(json_body={"path": request.path_info})
    return response(environ, start_response)


def _call(app, environ_overrides: dict) -> webob.Response:
    request = webob.Request.blank("/", headers={"accept": "application/json"})
    request.environ.update(environ_overrides)
    return request.get_response(app)


def test_unexpected_error_on_a_non_latin1_path_is_a_logged_500(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger="placement_wsgi.deploy"):
        response = _call(FaultWrapper(_failing_app), {"PATH_INFO": "/resource_providers/\u2603"})
    assert response.status_int == 500
    assert response.json["errors"][0]["status"] == 500
    assert "GET /resource_providers/\\u2603" in caplog.text


def test_unexpected_error_on_a_path_that_is_not_utf8_is_a_logged_500(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger="placement_wsgi.deploy"):
        response = _call(FaultWrapper(_failing_app), {"PATH_INFO": "/x/\xff"})
    assert response.status_int == 500
    assert "GET /x/\\xff" in caplog.text


def test_an_error_that_cannot_be_rendered_still_gets_a_json_500(monkeypatch) -> None:
    def broken_renderer(error, request):
        raise UnicodeEncodeError("latin-1", "\u2603", 0, 1, "rendering failed")

    monkeypatch.setattr(errors, "to_response", broken_renderer)
    response = _call(FaultWrapper(_failing_app), {"PATH_INFO": "/resource_providers/\u2603"})
    assert response.status_int == 500
    assert response.content_type == "application/json"
    body = json.loads(response.body)
    assert body["errors"][0]["status"] == 500
    assert body["errors"][0]["code"] == "placement.undefined_code"


def test_a_decoded_non_latin1_path_reaches_the_app_as_its_utf8_bytes() -> None:
    response = _call(FaultWrapper(_path_echo_app), {"PATH_INFO": "/traits/\u2603"})
    assert response.status_int == 200
    assert response.json == {"path": "/traits/\u2603"}
