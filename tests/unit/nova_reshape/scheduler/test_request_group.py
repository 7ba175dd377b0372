"""One group of a candidates query, built as nova builds its RequestGroup."""

from __future__ import annotations

import logging

from nova_reshape.scheduler.request_group import RequestGroup


def test_an_empty_group_until_something_is_asked():
    group = RequestGroup()
    assert group.is_empty() and group.use_same_provider
    assert not RequestGroup(in_tree="u1").is_empty()
    assert not RequestGroup(aggregates=[["a", "b"]]).is_empty()


def test_a_later_amount_replaces_the_earlier():
    group = RequestGroup("1")
    group.add_resource("VGPU", 1)
    group.add_resource("VGPU", 2)
    assert group.resources == {"VGPU": 2} and not group.is_empty()


def test_only_required_and_forbidden_traits_count(caplog):
    group = RequestGroup()
    group.add_trait("CUSTOM_FAST", "required")
    group.add_trait("CUSTOM_OLD", "forbidden")
    with caplog.at_level(logging.WARNING):
        group.add_trait("CUSTOM_NICE", "preferred")
    assert (group.required_traits, group.forbidden_traits) == ({"CUSTOM_FAST"}, {"CUSTOM_OLD"})
    assert "Only (required|forbidden) are supported for trait CUSTOM_NICE" in caplog.text
