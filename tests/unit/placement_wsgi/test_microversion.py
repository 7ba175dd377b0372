"""Microversion negotiation and the version gate of handlers."""

from __future__ import annotations

import pytest
import webob

from placement_wsgi import environ_keys, errors, microversion
from placement_wsgi.microversion import Version


def _environ(header: str | None) -> dict:
    environ = webob.Request.blank("/").environ
    if header is not None:
        environ["HTTP_OPENSTACK_API_VERSION"] = header
    return environ


def test_no_header_means_the_minimum() -> None:
    assert microversion.negotiate(_environ(None)) == Version(1, 0)


def test_latest_means_the_maximum() -> None:
    assert microversion.negotiate(_environ("placement latest")) == Version(1, 39)


def test_a_version_in_range_carries_the_range() -> None:
    version = microversion.negotiate(_environ("placement 1.20"))
    assert version == (1, 20)
    assert (version.min_version, version.max_version) == (Version(1, 0), Version(1, 39))


def test_another_service_s_header_is_ignored() -> None:
    assert microversion.negotiate(_environ("compute 2.1")) == Version(1, 0)


@pytest.mark.parametrize("header, status", [
    ("placement 1.40", 406), ("placement 2.0", 406), ("placement 1.x", 400),
    ("placement one", 400)])
def test_bad_versions(header: str, status: int) -> None:
    with pytest.raises(microversion.MicroversionError) as caught:
        microversion.negotiate(_environ(header))
    assert caught.value.status == status


def test_response_header_value() -> None:
    assert microversion.response_header_value(Version(1, 7)) == "placement 1.7"


def _request(version: tuple[int, int]) -> webob.Request:
    request = webob.Request.blank("/", method="PUT")
    request.environ[environ_keys.VERSION] = Version(*version)
    return request


def test_minimum_gates_with_404_or_405() -> None:
    def handler(request: webob.Request, value: int) -> webob.Response:
        """The docstring stays."""
        return webob.Response(status=200 + value)

    gated = microversion.minimum(1, 20)(handler)
    assert gated(_request((1, 20)), value=1).status_int == 201
    assert (gated.__name__, gated.__doc__, gated.__wrapped__) == (
        "handler", "The docstring stays.", handler)
    with pytest.raises(errors.NotFound):
        gated(_request((1, 19)), value=1)
    with pytest.raises(errors.MethodNotAllowed, match="The method PUT is not allowed"):
        microversion.minimum(1, 20, status_405=True)(handler)(_request((1, 2)), value=1)
