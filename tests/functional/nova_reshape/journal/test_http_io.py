"""A node read and a change written over the API, against the in-process reads and writes."""

from __future__ import annotations

import pytest

from nova_reshape.journal import http_io, names
from nova_reshape.journal.plan import change_for
from nova_reshape.journal.snapshot import differences, of_state
from nova_reshape.transport import http_placement
from placement_wsgi import errors
from placement_wsgi.direct import PlacementDirect
from tests.fixtures.config import make_conf
from tests.fixtures.http_journal import MIXED
from tests.fixtures.killed_runs import generate
from tests.fixtures.served import served
from tests.functional.nova_reshape.conftest import ADMIN_HEADERS
from tests.functional.nova_reshape.migrate_helpers import generator


@pytest.fixture
def served_placement(db_url, tmp_path):
    """(an HTTP client of the served cloud, the cloud's PlacementDirect)."""
    generate(db_url, tmp_path, hosts=2, gpus=2, instances=4, kinds=MIXED)
    direct = PlacementDirect(make_conf(db_url))
    with served(make_conf(db_url)) as (url, _log), direct:
        client = http_placement(url, token="admin", headers=ADMIN_HEADERS)
        try:
            yield client, direct
        finally:
            client.close()


def test_a_node_read_over_http_is_the_bulk_read(served_placement):
    client, direct = served_placement
    root = generator.stable_uuid(0, "cmp-0001")
    [state] = list(direct.read_trees([root]))
    expected = of_state(state)
    assert http_io.read_snapshot(client, root, set(expected.allocations)) == expected
    partial = http_io.read_snapshot(client, root, ())
    assert http_io.whole_consumers(partial) == set()
    assert differences(expected, partial, consumer_generations=False) != []
    assert http_io.read_snapshot(client, "0" * 8 + "-0000-4000-8000-" + "0" * 12, ()) is None


def test_a_change_with_a_stale_generation_is_a_concurrent_update(served_placement):
    client, direct = served_placement
    root = generator.stable_uuid(0, "cmp-0000")
    now = http_io.read_snapshot(client, root, ())
    changed = now.inventories | {root: {rc: dict(record, reserved=1) for rc, record
                                        in now.inventories[root].items()}}
    target = type(now)(**{**now.to_dict(), "inventories": changed})
    change = change_for(target, now)
    change.generations = {rp: generation - 1 for rp, generation in change.generations.items()}
    with pytest.raises(errors.ConcurrentUpdate):
        http_io.write_change(client, change)
    http_io.write_change(client, change_for(target, now))
    assert not differences(target, http_io.read_snapshot(client, root, ()))


def test_custom_names_created_since_are_forgotten_where_unused(served_placement):
    client, _direct = served_placement
    before = http_io.custom_names(client)
    for name in ("CUSTOM_UNUSED", "CUSTOM_USED"):
        assert client.request("PUT", f"/traits/{name}", microversion="1.6").status_code == 201
    root = generator.stable_uuid(0, "cmp-0000")
    traits = client.request("GET", f"/resource_providers/{root}/traits",
                            microversion="1.6").json()
    assert client.request("PUT", f"/resource_providers/{root}/traits", microversion="1.6",
                          json={"traits": [*traits["traits"], "CUSTOM_USED"],
                                "resource_provider_generation":
                                traits["resource_provider_generation"]}).status_code == 200
    assert http_io.forget_unused(client, before, dry_run=True) == [
        "trait CUSTOM_UNUSED", "trait CUSTOM_USED"]
    assert http_io.forget_unused(client, before, dry_run=False) == ["trait CUSTOM_UNUSED"]
    assert http_io.custom_names(client)[names.TRAITS] == sorted(
        [*before[names.TRAITS], "CUSTOM_USED"])
    assert http_io.forget_unused(client, None, dry_run=False) == []
