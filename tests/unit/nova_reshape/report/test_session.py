"""The report client's send path: @safe_connect, @retries and the request id."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from nova_reshape import exception
from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport import http_placement
from tests.fixtures.transports import RequestOnly


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
    assert report.providers.get_inventory(None, "rp") is None
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
    """A transport (``request()`` only) answering from a script of responses."""

    def __init__(self, *responses: _Response) -> None:
        self.responses = list(responses)
        self.requests: list[tuple[str, str]] = []

    def request(self, method: str, url: str, **_: Any) -> _Response:
        self.requests.append((method, url))
        return self.responses.pop(0)


PROVIDER_RACE = _Response(409, {"errors": [{"code": "placement.concurrent_update",
                                            "detail": "resource provider generation "
                                                      "conflict"}]})


def test_provider_races_are_retried_four_times_then_false():
    transport = _Scripted(*([PROVIDER_RACE] * 4))
    report = SchedulerReportClient(transport, retry_backoff=0)
    sleeps = []
    report.session.sleep = sleeps.append
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
    import nova_reshape.report.session as base

    bounds = []
    monkeypatch.setattr(base.random, "uniform", lambda low, high: bounds.append(high) or 0)
    transport = _Scripted(*([PROVIDER_RACE] * 4))
    report = SchedulerReportClient(transport)  # nova's factor 2
    report.session.sleep = lambda seconds: None
    report.put_allocations(None, "c", {"allocations": {}})
    assert bounds == [2.0, 4.0, 6.0]


def test_context_global_id_is_sent():
    class Context:
        global_id = "req-abc"

    seen = {}

    class Transport(_Scripted):
        def request(self, method, url, **kwargs):
            seen.update(kwargs)
            return _Response(200, {"allocations": {}})

    report = SchedulerReportClient(Transport())
    report.get_allocs_for_consumer(Context(), "c")
    assert seen["headers"] == {"X-OpenStack-Request-ID": "req-abc"}
    assert seen["microversion"] == "1.28"


def test_session_sends_every_verb_through_request_only():
    from nova_reshape.report import PlacementSession

    class Context:
        global_request_id = "req-1"

    transport = RequestOnly(_Response(204))
    session = PlacementSession(transport)
    session.get("/a", version="1.14")
    session.put("/b", {"x": 1}, version="1.6", context=Context())
    session.post("/c", [1])
    session.delete("/d", context=Context())
    request_id = {"X-OpenStack-Request-ID": "req-1"}
    assert transport.seen == [
        ("GET", "/a", {"json": None, "microversion": "1.14", "headers": None}),
        ("PUT", "/b", {"json": {"x": 1}, "microversion": "1.6", "headers": request_id}),
        ("POST", "/c", {"json": [1], "microversion": None, "headers": None}),
        ("DELETE", "/d", {"json": None, "microversion": None, "headers": request_id}),
    ]


def test_client_raw_verbs_delegate_to_its_session():
    transport = RequestOnly(_Response(204))
    report = SchedulerReportClient(transport)
    report.get("/a", version="1.9")
    report.put("/b", {"y": 2})
    report.post("/c", {"z": 3}, version="1.30")
    report.delete("/d")
    assert [(method, url, kwargs["json"], kwargs["microversion"])
            for method, url, kwargs in transport.seen] == [
        ("GET", "/a", None, "1.9"), ("PUT", "/b", {"y": 2}, None),
        ("POST", "/c", {"z": 3}, "1.30"), ("DELETE", "/d", None, None)]


def test_retrying_returns_the_first_answer_without_sleeping():
    from nova_reshape.report import PlacementSession, Retry

    sleeps: list[float] = []
    session = PlacementSession(RequestOnly(), sleep=sleeps.append)
    answers = iter([Retry("op", "race"), "done"])

    def attempt() -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert session.retrying("op", attempt) == "done"
    assert len(sleeps) == 1
