"""CountingTransport: every request counted once in request(), tree writes as one."""

from __future__ import annotations

from typing import Any

import pytest

from nova_reshape.transport import CountingTransport
from nova_reshape.transport.counting import innermost
from placement_wsgi.objects.tree_change import TreeChange
from tests.fixtures.transports import RequestOnly


def test_counting_counts_and_passes_everything_through():
    inner = RequestOnly()
    counting = CountingTransport(inner)
    assert counting.get("/a") == "GET /a"
    assert counting.put("/b", json={"x": 1}, microversion="1.30", headers={"h": "v"}) == "PUT /b"
    counting.post("/c", json=[1])
    counting.delete("/d")
    assert counting.calls == 4
    assert counting.writes == 3
    assert inner.seen[1] == ("PUT", "/b", {"json": {"x": 1}, "microversion": "1.30",
                                           "headers": {"h": "v"}})
    assert [method for method, _, _ in inner.seen] == ["GET", "PUT", "POST", "DELETE"]
    assert inner.seen[0][2] == {"json": None, "microversion": None, "headers": None}


def test_counting_counts_in_request_itself():
    """Counting lives in request(): a caller that never uses the verbs is counted too,
    and its method, body, microversion and headers reach the wrapped transport as given."""
    inner = RequestOnly()
    counting = CountingTransport(inner)
    assert counting.request("GET", "/a") == "GET /a"
    assert counting.request("post", "/b", json={"x": 1}, microversion="1.20",
                            headers={"X-OpenStack-Request-ID": "r"}) == "post /b"
    assert (counting.calls, counting.writes) == (2, 1)
    assert inner.seen[1] == ("post", "/b", {"json": {"x": 1}, "microversion": "1.20",
                                            "headers": {"X-OpenStack-Request-ID": "r"}})


def test_counting_layers_each_count_once():
    inner = RequestOnly()
    outer = CountingTransport(CountingTransport(inner))
    outer.put("/x", json={})
    outer.get("/y")
    assert (outer.calls, outer.writes) == (2, 1)
    assert (outer.placement.calls, outer.placement.writes) == (2, 1)
    assert len(inner.seen) == 2


class _TreeWriting(RequestOnly):
    """request() plus the one-call tree writes of the in-process transport."""

    def apply_tree_change(self, change: Any, check: Any = None) -> dict[str, int]:
        self.seen.append(("apply_tree_change", "", {"change": change, "check": check}))
        return {"rp": 3}

    def apply_tree_changes(self, changes: Any, checks: Any = ()) -> dict[str, int]:
        self.seen.append(("apply_tree_changes", "", {"changes": changes, "checks": checks}))
        return {"rp": 4}


def test_counting_counts_a_tree_change_as_one_call_and_one_write():
    inner = _TreeWriting()
    counting = CountingTransport(CountingTransport(inner))
    change = TreeChange()
    assert counting.apply_tree_change(change) == {"rp": 3}
    assert (counting.calls, counting.writes) == (1, 1)
    assert counting.placement.calls == 1  # each layer counts it once
    assert inner.seen == [("apply_tree_change", "", {"change": change, "check": None})]


def test_counting_counts_each_change_written_together_as_one_call_and_one_write():
    inner = _TreeWriting()
    counting = CountingTransport(inner)
    changes = [TreeChange(), TreeChange(), TreeChange()]
    assert counting.apply_tree_changes(changes) == {"rp": 4}
    assert (counting.calls, counting.writes) == (3, 3)
    assert inner.seen == [("apply_tree_changes", "", {"changes": changes, "checks": ()})]


def test_counting_refuses_a_tree_change_its_transport_cannot_write():
    counting = CountingTransport(RequestOnly())
    with pytest.raises(TypeError, match="cannot write a tree"):
        counting.apply_tree_change(TreeChange())
    with pytest.raises(TypeError, match="cannot write a tree"):
        counting.apply_tree_changes([TreeChange()])
    assert (counting.calls, counting.writes) == (0, 0)


def test_innermost_looks_through_every_counting_layer():
    inner = RequestOnly()
    assert innermost(CountingTransport(CountingTransport(inner))) is inner
    assert innermost(inner) is inner
