"""SchedulerReportClient's construction: one session and one cache shared by its collaborators."""

from __future__ import annotations

import pytest

from nova_reshape.report import SchedulerReportClient


class _NoTransport:
    def request(self, *args, **kwargs):
        raise AssertionError("no request expected")


def test_collaborators_share_one_session_and_one_cache():
    report = SchedulerReportClient(_NoTransport(), association_refresh=7,
                                   sharing_providers_max_uuids_per_request=3, retry_backoff=0)
    assert report.session.placement.__class__ is _NoTransport
    assert report.session.retry_backoff == 0
    assert report.cache.association_refresh == 7
    assert report.providers.sharing_providers_max_uuids_per_request == 3
    for collaborator in (report.providers, report.setters, report.allocations):
        assert collaborator.session is report.session
        assert collaborator.cache is report.cache
    assert report.setters.providers is report.providers
    assert report.allocations.providers is report.providers


def test_cache_methods_act_on_the_shared_cache():
    report = SchedulerReportClient(_NoTransport())
    report.cache.tree.new_root("node", "root")
    report.cache.mark_refreshed("root")
    report.invalidate_resource_provider("root", cacheonly=True)
    assert report.cache.tree.exists("root") and report.cache.refresh_times == {}
    old = report.cache.tree
    report.clear_provider_cache()
    assert report.cache.tree is not old and not report.cache.tree.exists("root")


def test_negative_association_refresh_is_refused():
    with pytest.raises(ValueError):
        SchedulerReportClient(_NoTransport(), association_refresh=-1)


def test_an_unchanged_tree_sends_nothing():
    report = SchedulerReportClient(_NoTransport())
    report.update_from_provider_tree(None, report.cache.snapshot())
