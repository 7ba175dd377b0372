"""The static compute-node lookup used when no nova database is given."""

from __future__ import annotations


def test_static_nodes_answer_only_for_their_own_uuids():
    from nova_reshape.scheduler.nodes import StaticNodes

    nodes = StaticNodes({"u1": {"host": "h1", "nodename": "n1"}, "u2": {"host": "h1",
                                                                       "nodename": "n2"},
                         "u3": {"host": "h3"}})
    assert nodes.entries(["u3", "child", "u1"]) == {"u3": {"host": "h3"},
                                                    "u1": {"host": "h1", "nodename": "n1"}}
    assert sorted(nodes.lookup("h1", None)) == ["u1", "u2"]
    assert nodes.lookup("h1", "n2") == ["u2"]
    assert nodes.lookup(None, "h3") == ["u3"]  # nodename defaults to the host name
