"""The filter bases: nova's ``host_passes`` for third parties, ``checker`` for built-ins.

The third-party filters below are written only against nova's contract
(``host_passes``) and are loaded by dotted path, as an operator would.
"""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.filters import (
    BaseHostFilter,
    PreparedHostFilter,
    all_filters,
    load_filters,
)
from nova_reshape.scheduler.filters.base import Rejection
from tests.unit.nova_reshape.scheduler.helpers import host, scenario, schedule

HERE = __name__


class BigHostFilter(BaseHostFilter):
    """Keeps hosts with at least 16 vCPUs; counts its calls."""

    calls: list[str] = []

    def host_passes(self, host_state, spec_obj):
        type(self).calls.append(host_state.host)
        if host_state.vcpus_total >= 16:
            return True
        return self.reject("only %d vCPUs", host_state.vcpus_total)


class NeverFilter(BaseHostFilter):
    """Drops every host with a plain False."""

    def host_passes(self, host_state, spec_obj):
        return False


class CountingPreparedFilter(PreparedHostFilter):
    """A built-in-style filter counting how often the request is prepared."""

    def __init__(self, keep=None):
        super().__init__()
        self.keep = keep
        self.prepared = 0

    def checker(self, spec_obj):
        self.prepared += 1
        if self.keep is None:
            return None
        return lambda host_state: host_state.host in self.keep or self.reject("not kept")


def _hosts():
    return [host("h1", vcpus=8), host("h2", vcpus=16), host("h3", vcpus=32)]


@pytest.fixture(autouse=True)
def _no_calls_yet():
    BigHostFilter.calls = []


def test_third_party_host_passes_filter_is_loaded_and_run_per_host():
    config = {"filter_scheduler": {
        "available_filters": ["nova.scheduler.filters.all_filters", f"{HERE}.BigHostFilter"],
        "enabled_filters": ["ComputeFilter", "BigHostFilter"]}}
    trace = schedule(_hosts(), {}, config).instances[0]
    assert [h.label for h in trace.passed] == ["h2", "h3"]
    assert trace.reasons() == {"h1": "BigHostFilter: only 8 vCPUs"}
    assert BigHostFilter.calls == ["h1", "h2", "h3"]


def test_a_plain_false_is_reported_with_the_filter_name():
    loaded = scenario(_hosts(), {}, {"filter_scheduler": {
        "available_filters": [f"{HERE}.NeverFilter"], "enabled_filters": ["NeverFilter"]}})
    (never,) = load_filters(loaded.conf)
    assert never.filter_all(loaded.hosts, loaded.spec) == (
        [], {"h1": "rejected by NeverFilter", "h2": "rejected by NeverFilter",
             "h3": "rejected by NeverFilter"})


def test_base_filter_with_no_host_calls_nothing():
    loaded = scenario(_hosts())
    assert BigHostFilter().filter_all([], loaded.spec) == ([], {})
    assert BigHostFilter.calls == []


def test_prepared_filter_prepares_once_per_filter_all():
    loaded = scenario(_hosts())
    prepared = CountingPreparedFilter(keep={"h1", "h3"})
    passed, rejected = prepared.filter_all(loaded.hosts, loaded.spec)
    assert [h.label for h in passed] == ["h1", "h3"] and rejected == {"h2": "not kept"}
    assert prepared.prepared == 1


def test_prepared_filter_host_passes_follows_from_checker():
    loaded = scenario(_hosts())
    prepared = CountingPreparedFilter(keep={"h1"})
    verdicts = [prepared.host_passes(h, loaded.spec) for h in loaded.hosts]
    assert verdicts[0] is True
    assert [isinstance(v, Rejection) and v.reason for v in verdicts[1:]] == ["not kept"] * 2


def test_prepared_filter_without_a_check_passes_every_host_unprepared_when_empty():
    loaded = scenario(_hosts())
    everyone = CountingPreparedFilter(keep=None)
    assert everyone.filter_all(loaded.hosts, loaded.spec) == (loaded.hosts, {})
    assert everyone.host_passes(loaded.hosts[0], loaded.spec) is True
    assert everyone.filter_all([], loaded.spec) == ([], {})
    assert everyone.prepared == 2


@pytest.mark.parametrize(("cls", "method"), [(BaseHostFilter, "host_passes"),
                                              (PreparedHostFilter, "checker")])
def test_a_filter_must_write_its_bases_one_method(cls, method):
    loaded = scenario(_hosts())
    with pytest.raises(NotImplementedError, match=method):
        cls().filter_all(loaded.hosts, loaded.spec)


def test_every_builtin_filter_is_a_prepared_filter_with_its_own_checker():
    for cls in all_filters():
        assert issubclass(cls, PreparedHostFilter), cls
        assert cls.checker is not PreparedHostFilter.checker, cls
