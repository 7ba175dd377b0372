"""ProviderCache: the refresh rule and what clearing forgets."""

from __future__ import annotations

import pytest

from nova_reshape.report import ProviderCache


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _cache(refresh: int) -> tuple[ProviderCache, _Clock]:
    clock = _Clock()
    cache = ProviderCache(refresh, clock=clock)
    cache.tree.new_root("node", "root")
    cache.tree.new_child("child", "root", uuid="kid")
    return cache, clock


def test_never_read_is_stale_then_fresh_until_the_period_passes():
    cache, clock = _cache(300)
    assert cache.stale("root")
    cache.mark_refreshed("root")
    assert not cache.stale("root")
    clock.now += 300
    assert not cache.stale("root")  # stale only after more than the period
    clock.now += 1
    assert cache.stale("root")


def test_zero_means_never_stale_again_once_read():
    cache, clock = _cache(0)
    assert cache.stale("root")
    cache.mark_refreshed("root")
    clock.now += 10 ** 9
    assert not cache.stale("root")


def test_negative_refresh_is_refused():
    with pytest.raises(ValueError, match="association_refresh"):
        ProviderCache(-1)


def test_invalidate_forgets_the_time_and_unless_cacheonly_the_provider():
    cache, _ = _cache(300)
    cache.mark_refreshed("kid")
    cache.invalidate("kid", cacheonly=True)
    assert cache.tree.exists("kid") and cache.stale("kid")
    cache.invalidate("kid")
    assert not cache.tree.exists("kid")
    cache.invalidate("not-cached")  # no error


def test_clear_tree_forgets_the_whole_tree_only():
    cache, _ = _cache(300)
    cache.tree.new_root("other", "other")
    for uuid in ("root", "kid", "other"):
        cache.mark_refreshed(uuid)
    cache.clear_tree("kid")
    assert not cache.tree.exists("root") and not cache.tree.exists("kid")
    assert cache.refresh_times.keys() == {"other"}
    cache.clear_tree("kid")  # no longer cached: no-op


def test_clear_starts_a_new_tree_and_snapshot_is_a_copy():
    cache, _ = _cache(300)
    old = cache.tree
    snapshot = cache.snapshot()
    snapshot.update_traits("root", ["CUSTOM_X"])
    assert cache.tree.data("root").traits == set()
    cache.mark_refreshed("root")
    cache.clear(init=True)
    assert cache.tree is not old and cache.tree.get_provider_uuids() == []
    assert cache.refresh_times == {}
    assert old.exists("root")  # a caller holding the old tree keeps it
