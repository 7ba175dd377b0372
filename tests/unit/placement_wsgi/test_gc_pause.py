"""placement_wsgi.gc_pause: the collector is off inside, restored after, nesting counted."""

from __future__ import annotations

import gc

import pytest

from placement_wsgi.gc_pause import paused_collection


@pytest.fixture(autouse=True)
def _collector_restored():
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_paused_inside_and_resumed_after_even_on_error():
    gc.enable()
    with pytest.raises(RuntimeError), paused_collection():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_resume_only_at_the_last_end():
    gc.enable()
    outer = paused_collection()
    outer.__enter__()
    with paused_collection():
        assert not gc.isenabled()
    assert not gc.isenabled()
    outer.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_collector_disabled_by_someone_else_stays_disabled():
    gc.disable()
    with paused_collection():
        assert not gc.isenabled()
    assert not gc.isenabled()
