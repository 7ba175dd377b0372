"""http_placement: headers, kept-alive connections, and which failures are retried."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from typing import Any

import pytest
import requests
import urllib3.util.connection

from nova_reshape.transport import http_placement
from nova_reshape.transport.counting import CountingTransport
from nova_reshape.transport.http import service_url
from placement_wsgi.client import EnvironmentOnceSession


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


def test_the_service_url_names_the_service_with_its_password_masked():
    """Which Placement a journal file's record was read from: the client's URL
    (counting layers looked through), no password; none for other transports."""
    secret = http_placement("http://admin:secret@placement.example:8778/placement/")
    plain = http_placement("http://placement.example:8778")
    try:
        assert service_url(CountingTransport(secret)) == (
            "http://admin:***@placement.example:8778/placement")
        assert service_url(plain) == "http://placement.example:8778"
        assert service_url(object()) is None
    finally:
        secret.close()
        plain.close()


def test_http_placement_reads_the_environment_once(echo_server, monkeypatch):
    client = http_placement(_url(echo_server))
    assert isinstance(client.session, EnvironmentOnceSession)
    calls = []
    real = requests.utils.get_environ_proxies
    monkeypatch.setattr(requests.sessions, "get_environ_proxies",
                        lambda *args, **kwargs: calls.append(args) or real(*args, **kwargs))
    for _ in range(3):
        assert client.get("/resource_providers").status_code == 200
    assert len(calls) == 1
    assert len(echo_server.seen) == 3
