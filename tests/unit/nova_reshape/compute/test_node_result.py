"""NodeStatus: an enum whose members read, compare and serialise as the old strings."""

from __future__ import annotations

import json

from nova_reshape.compute import node_result


def test_statuses_serialise_as_their_strings() -> None:
    results = [node_result.NodeResult("a", node_result.NodeStatus.MIGRATED),
               node_result.NodeResult("b", node_result.NodeStatus.MIGRATED),
               node_result.NodeResult("c", node_result.NodeStatus.NOT_RUN)]
    assert json.dumps(node_result.summarize(results)) == '{"migrated": 2, "not-run": 1}'
    assert json.dumps([result.status for result in results]) == \
        '["migrated", "migrated", "not-run"]'


def test_module_names_are_the_members() -> None:
    assert node_result.INVARIANT is node_result.NodeStatus.INVARIANT
    assert node_result.INVARIANT == "invariant-violated"
    assert f"{node_result.WOULD_MIGRATE}" == "would-migrate"
    assert node_result.STOPPING == {"failed", "invariant-violated"}
