"""Reading nodes over the API from the run's survey gives what the report client reads.

The half-migrated deployment of test_tree_source (nested trees, owner and
custom traits, a sharing provider in a node's aggregate, a consumer spread
over two nodes), read through the API on every enabled engine: once per
node as nova's report client reads it, once from one survey of the cloud
plus two requests per provider.
"""

from __future__ import annotations

from nova_reshape.compute.api_reader import ReportClientReader, SurveyReader
from nova_reshape.compute.preflight import Listing
from nova_reshape.transport import CountingTransport, open_direct
from tests.fixtures.config import make_conf
from tests.functional.nova_reshape.compute.test_tree_source import (  # noqa: F401 - fixture
    _per_node,
    _shape,
    deployment,
)
from tests.functional.nova_reshape.migrate_helpers import ok


def _begin(reader: SurveyReader, placement) -> None:
    listing = ok(placement.get("/resource_providers", microversion="1.14"))
    reader.begin(Listing(listing["resource_providers"]).trees)


def _in_tree(allocations, providers) -> dict:
    """The whole bodies cut to the allocations on ``providers`` (resources only)."""
    cut = {}
    for consumer, body in allocations.items():
        held = {rp: {"resources": entry["resources"]}
                for rp, entry in body["allocations"].items() if rp in providers}
        if held:
            cut[consumer] = {"allocations": held}
    return cut


def test_a_surveyed_node_is_what_the_report_client_reads_in_two_calls_per_provider(
        db_url, deployment):  # noqa: F811 - the fixture imported above
    with open_direct(make_conf(db_url)) as direct:
        counting = CountingTransport(direct)
        reader = SurveyReader(counting)
        _begin(reader, counting)
        for root, name in deployment:
            before = counting.calls
            state = next(reader.read({root: name}))
            providers = state.tree.get_provider_uuids(name)
            assert counting.calls - before == 2 * len(providers)
            tree, allocations = _per_node(direct, root, name)
            assert _shape(state.tree) == _shape(tree)
            assert [p.uuid for p in state.tree.roots] == [p.uuid for p in tree.roots]
            assert state.allocations == _in_tree(allocations, set(providers))
            assert state.partial == frozenset(state.allocations)
            whole = reader.complete(state, state.partial)
            assert whole.allocations == allocations and not whole.partial
        first = next(reader.read({deployment[0][0]: deployment[0][1]}))
        assert any(p.name == "shared-storage" for p in first.tree.roots)


def test_a_node_changed_since_the_survey_or_read_twice_is_read_as_nova_reads(
        db_url, deployment):  # noqa: F811 - the fixture imported above
    (root, name), (other, other_name) = deployment[1], deployment[2]
    with open_direct(make_conf(db_url)) as direct:
        counting = CountingTransport(direct)
        reader = SurveyReader(counting)
        _begin(reader, counting)
        ok(direct.put("/traits/CUSTOM_LATE", microversion="1.6"))
        generation = ok(direct.get(f"/resource_providers/{root}",
                                   microversion="1.14"))["generation"]
        ok(direct.put(f"/resource_providers/{root}/traits", json={
            "resource_provider_generation": generation, "traits": ["CUSTOM_LATE"]},
            microversion="1.6"))
        per_node = ReportClientReader(direct)
        state = next(reader.read({root: name}))
        assert _shape(state.tree) == _shape(next(per_node.read({root: name})).tree)
        assert "CUSTOM_LATE" in state.tree.data(root).traits
        next(reader.read({other: other_name}))
        before = counting.calls
        again = next(reader.read({other: other_name}))  # a second read: not from the survey
        providers = len(again.tree.get_provider_uuids(other_name))
        assert counting.calls - before == 1 + 4 * providers


def test_a_node_read_root_only_then_its_other_providers_is_the_whole_read(
        db_url, deployment):  # noqa: F811 - the fixture imported above
    with open_direct(make_conf(db_url)) as direct:
        counting = CountingTransport(direct)
        whole, root_only = SurveyReader(counting), SurveyReader(counting, whole=False)
        _begin(whole, counting)
        _begin(root_only, counting)
        for root, name in deployment:
            expected = next(whole.read({root: name}))
            before = counting.calls
            state = next(root_only.read({root: name}))
            providers = state.tree.get_provider_uuids(name)
            assert counting.calls - before == len(providers) + 1  # inventories, root's allocations
            assert state.unread == frozenset(providers) - {root}
            assert set(state.allocations) <= set(expected.allocations)
            before = counting.calls
            state = root_only.read_unread(state)
            assert counting.calls - before == len(providers) - 1
            assert state.allocations == expected.allocations and not state.unread
            assert state.partial == expected.partial
