"""http_placement and the report client's @safe_connect / @retries."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from typing import Any

import pytest
import requests
import urllib3.util.connection

from nova_reshape import exception
from nova_reshape.placement_client import http_placement
from nova_reshape.report import SchedulerReportClient


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append({  # type: ignore[attr-defined]
            "method": self.command, "path": self.path, "port": self.client_address[1],
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": json.loads(body) if body else None})
        if self.path == "/drop":
            # Read the request, then hang up without answering.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        payload = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_PUT = do_POST = do_DELETE = _answer


@pytest.fixture
def echo_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_headers_token_and_microversion(echo_server):
    client = http_placement(_url(echo_server) + "/placement", token="tok",
                            headers={"X-Roles": "admin,service"})
    client.get("/resource_providers")
    client.put("/traits/CUSTOM_X", json={"a": 1}, microversion="1.6",
               headers={"X-OpenStack-Request-ID": "req-1"})
    first, second = echo_server.seen
    assert first["path"] == "/placement/resource_providers"
    assert first["headers"]["x-auth-token"] == "tok"
    assert first["headers"]["x-roles"] == "admin,service"
    assert first["headers"]["accept"] == "application/json"
    assert "openstack-api-version" not in first["headers"]  # no version = 1.0
    assert second["headers"]["openstack-api-version"] == "placement 1.6"
    assert second["headers"]["x-openstack-request-id"] == "req-1"
    assert second["body"] == {"a": 1}
    assert second["headers"]["x-auth-token"] == "tok"


def test_connections_are_reused(echo_server):
    client = http_placement(_url(echo_server))
    for _ in range(3):
        assert client.get("/x").json() == {"ok": True}
    assert len({seen["port"] for seen in echo_server.seen}) == 1


def test_connect_failures_are_retried(monkeypatch):
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise ConnectionRefusedError("refused")

    monkeypatch.setattr(urllib3.util.connection, "create_connection", refuse)
    client = http_placement("http://127.0.0.1:9", connect_retries=2)
    with pytest.raises(requests.exceptions.ConnectionError):
        client.post("/allocations", json={})
    assert len(attempts) == 3  # the first try and two retries


def test_failures_after_sending_are_not_retried(echo_server):
    client = http_placement(_url(echo_server), connect_retries=3)
    with pytest.raises(requests.exceptions.ConnectionError):
        client.post("/drop", json={"x": 1})
    assert [seen["path"] for seen in echo_server.seen] == ["/drop"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_safe_connect_returns_none_when_placement_is_down():
    report = SchedulerReportClient(
        http_placement(f"http://127.0.0.1:{_free_port()}", connect_retries=0),
        retry_backoff=0)
    assert report.claim_resources(None, "c", {"allocations": {}}, "p", "u", "1.36") is None
    assert report.delete_allocation_for_instance(None, "c") is None
    assert report.get_allocation_candidates(None, "resources=VCPU:1") is None
    assert report._get_inventory(None, "rp") is None
    with pytest.raises(exception.ResourceProviderCreationFailed):
        report.get_provider_tree_and_ensure_root(None, "rp", name="node")
    with pytest.raises(exception.PlacementAPIConnectFailure):
        report.put_allocations(None, "c", {"allocations": {}})


class _Response:
    def __init__(self, status: int, body: Any = None) -> None:
        self.status_code = status
        self._body = body
        self.text = json.dumps(body)

    def __bool__(self) -> bool:
        return self.status_code < 400

    def json(self) -> Any:
        return self._body


class _Scripted:
    """A transport answering from a script of responses, recording requests."""

    def __init__(self, *responses: _Response) -> None:
        self.responses = list(responses)
        self.requests: list[tuple[str, str]] = []

    def _next(self, method: str, url: str, **_: Any) -> _Response:
        self.requests.append((method, url))
        return self.responses.pop(0)

    def get(self, url, **kwargs):
        return self._next("GET", url, **kwargs)

    def put(self, url, **kwargs):
        return self._next("PUT", url, **kwargs)

    def post(self, url, **kwargs):
        return self._next("POST", url, **kwargs)

    def delete(self, url, **kwargs):
        return self._next("DELETE", url, **kwargs)


PROVIDER_RACE = _Response(409, {"errors": [{"code": "placement.concurrent_update",
                                            "detail": "resource provider generation "
                                                      "conflict"}]})


def test_provider_races_are_retried_four_times_then_false():
    transport = _Scripted(*([PROVIDER_RACE] * 4))
    report = SchedulerReportClient(transport, retry_backoff=0)
    sleeps = []
    report._sleep = sleeps.append
    payload = {"allocations": {}, "project_id": "p", "user_id": "u",
               "consumer_generation": None}
    assert report.put_allocations(None, "c", payload) is False
    assert len(transport.requests) == 4
    assert len(sleeps) == 3  # before attempts 1, 2 and 3


def test_retry_succeeds_after_a_race():
    transport = _Scripted(PROVIDER_RACE, _Response(204))
    report = SchedulerReportClient(transport, retry_backoff=0)
    payload = {"allocations": {}, "project_id": "p", "user_id": "u",
               "consumer_generation": None}
    assert report.put_allocations(None, "c", payload) is True


def test_retry_backoff_grows_with_the_attempt(monkeypatch):
    import nova_reshape.report_base as base

    bounds = []
    monkeypatch.setattr(base.random, "uniform", lambda low, high: bounds.append(high) or 0)
    transport = _Scripted(*([PROVIDER_RACE] * 4))
    report = SchedulerReportClient(transport)  # nova's factor 2
    report._sleep = lambda seconds: None
    report.put_allocations(None, "c", {"allocations": {}})
    assert bounds == [2.0, 4.0, 6.0]


def test_context_global_id_is_sent():
    class Context:
        global_id = "req-abc"

    seen = {}

    class Transport(_Scripted):
        def get(self, url, **kwargs):
            seen.update(kwargs)
            return _Response(200, {"allocations": {}})

    report = SchedulerReportClient(Transport())
    report.get_allocs_for_consumer(Context(), "c")
    assert seen["headers"] == {"X-OpenStack-Request-ID": "req-abc"}
    assert seen["microversion"] == "1.28"


def test_exception_messages_and_kwargs():
    error = exception.ResourceProviderUpdateConflict(uuid="u", generation=3, error="boom")
    assert "u" in str(error) and "generation 3" in str(error) and "boom" in str(error)
    assert error.kwargs == {"uuid": "u", "generation": 3, "error": "boom"}
    assert isinstance(error, exception.PlacementAPIConflict)
    assert isinstance(exception.PlacementReshapeConflict(error="x"),
                      exception.PlacementAPIConflict)
    assert str(exception.InventoryInUse("free text detail")) == "free text detail"
    assert isinstance(exception.InventoryInUse("x"), exception.Invalid)
    assert isinstance(exception.ResourceProviderNotFound(name_or_uuid="n"),
                      exception.NotFound)
    assert "message" in str(exception.ResourceProviderRetrievalFailed(message="message"))
