"""Property-based fuzzing of every route, method and a spread of microversions.

Bodies come from each route's own JSON schemas and are then mutated (NUL
and control characters, lone surrogates, very long strings, huge, negative
and non-finite numbers, floats for integers, deep nesting, multi-MB bodies,
raw bytes); query strings from the query schemas plus repeated, empty and
badly percent-encoded parameters; paths with hostile and badly encoded
values; headers with bad ``OpenStack-API-Version``, ``Content-Type`` and
``Accept`` values. The invariant is :meth:`tests.fixtures.fuzz.FuzzTarget.send`:
no 5xx, the error format on every 4xx, nothing written by a refused request.

Runs on every enabled engine. Bounded by the ``ci`` Hypothesis profile,
derandomised: every engine gets the same requests, drawn once
(:func:`tests.fixtures.fuzz.run_examples`); ``NOVA_RESHAPE_FUZZ_PROFILE=long``
runs many more examples, freshly drawn per engine (see
docs/failure-behaviour.md).
"""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import strategies as st

from placement_wsgi import router
from placement_wsgi.microversion import Version
from tests.fixtures import api_routes, fuzz

ROUTES = sorted(api_routes.ROUTE_INPUTS)


@pytest.fixture(scope="module")
def targets():
    """One seeded app per engine for the whole module (reset after each write)."""
    opened: dict[str, fuzz.FuzzTarget] = {}
    yield opened
    for target in opened.values():
        target.close()


@pytest.fixture
def target(targets, engine) -> fuzz.FuzzTarget:
    if engine not in targets:
        targets[engine] = fuzz.FuzzTarget(engine)
    return targets[engine]


@st.composite
def _path(draw: st.DrawFn, template: str) -> str:
    names = re.findall(r"{(\w+)}", template)
    return api_routes.fill_path(template, {name: draw(fuzz.path_value(name)) for name in names})


def _version_header(version: str) -> dict[str, str]:
    return {"openstack-api-version": f"placement {version}"}


def _route_request(template: str, method: str, data: st.DataObject) -> fuzz.Drawn:
    route = api_routes.ROUTE_INPUTS[(template, method)]
    version_text = data.draw(st.sampled_from(fuzz.VERSIONS), label="version")
    major, minor = (int(part) for part in version_text.split("."))
    version = Version(major, minor)
    path = data.draw(_path(template), label="path")
    query_schema = route.query(version) if version >= route.since else None
    if query_schema is not None or data.draw(st.booleans(), label="add query"):
        path += "?" + data.draw(fuzz.query_string(query_schema), label="query")
    body = None
    body_schema = route.body(version) if version >= route.since else None
    if body_schema is not None:
        valid = data.draw(fuzz.schema_values(body_schema).flatmap(fuzz.anchored), label="valid")
        body = data.draw(fuzz.mutated_body(valid), label="body")
    elif method in ("PUT", "POST") and data.draw(st.booleans(), label="stray body"):
        body = data.draw(fuzz.mutated_body({"name": "x"}), label="body")
    return method, path, body, _version_header(version_text)


@pytest.mark.parametrize("template, method", ROUTES, ids=[f"{m} {t or '<empty>'}"
                                                          for t, m in ROUTES])
def test_route(target, template, method) -> None:
    """Generated and mutated requests to one route never break the invariant."""
    fuzz.run_examples(target, ("route", template, method),
                      functools.partial(_route_request, template, method))


_BAD_VERSIONS = st.one_of(
    st.sampled_from(["placement 1.40", "placement 2.0", "placement 0.9", "placement 1.",
                     "placement 1.a", "placement -1.5", "placement 1.0001", "placement latest ",
                     "placement", "", "compute 1.5", "placement 1.5, placement 1.6",
                     "placement 1.99999999999999999999", "placement \u2603", "placement 1.5\x00",
                     "PLACEMENT 1.20", "placement\t1.20"]),
    st.text(max_size=20).map(lambda text: "placement " + text),
)
_CONTENT_TYPES = st.sampled_from([
    None, "", "application/json", "application/json; charset=utf-8", "application/JSON",
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "application/json; charset=latin-1", "application/json;;", "\u2603/json", "*/*"])
_ACCEPTS = st.sampled_from([
    "application/json", "*/*", "text/html", "text/plain", "application/xml",
    "application/json;q=0", "", "garbage;;q=x", "text/*, application/*;q=0.1"])


def _header_request(template: str, method: str, data: st.DataObject) -> fuzz.Drawn:
    headers = {
        "openstack-api-version": data.draw(st.one_of(
            _BAD_VERSIONS, st.sampled_from(fuzz.VERSIONS).map("placement {}".format)),
            label="version"),
        "content-type": data.draw(_CONTENT_TYPES, label="content-type"),
        "accept": data.draw(_ACCEPTS, label="accept"),
    }
    path = data.draw(_path(template), label="path")
    # Headers are judged before the body is; a small object is enough.
    body = data.draw(st.sampled_from([None, b"{}", b'{"name": "x"}']), label="body")
    return method, path, body, headers


@pytest.mark.parametrize("template, method", ROUTES, ids=[f"{m} {t or '<empty>'}"
                                                          for t, m in ROUTES])
def test_headers(target, template, method) -> None:
    """Bad version, Content-Type and Accept headers are 4xx in the error format."""
    fuzz.run_examples(target, ("headers", template, method),
                      functools.partial(_header_request, template, method))


def test_every_route_is_fuzzed() -> None:
    assert {(t, m) for t, methods in router.ROUTE_DECLARATIONS.items() for m in methods} == set(
        ROUTES)
