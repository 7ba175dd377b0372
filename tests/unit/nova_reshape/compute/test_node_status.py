"""NodeStatus: an enum whose members read, compare and serialise as the old strings."""

from __future__ import annotations

import json

from nova_reshape.compute import migrate


def test_statuses_serialise_as_their_strings() -> None:
    results = [migrate.NodeResult("a", migrate.NodeStatus.MIGRATED),
               migrate.NodeResult("b", migrate.NodeStatus.MIGRATED),
               migrate.NodeResult("c", migrate.NodeStatus.NOT_RUN)]
    assert json.dumps(migrate.summarize(results)) == '{"migrated": 2, "not-run": 1}'
    assert json.dumps([result.status for result in results]) == \
        '["migrated", "migrated", "not-run"]'


def test_module_names_are_the_members() -> None:
    assert migrate.INVARIANT is migrate.NodeStatus.INVARIANT
    assert migrate.INVARIANT == "invariant-violated"
    assert f"{migrate.WOULD_MIGRATE}" == "would-migrate"
    assert migrate.STOPPING == {"failed", "invariant-violated"}
