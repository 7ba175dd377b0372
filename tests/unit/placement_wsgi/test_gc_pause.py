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


def test_a_long_run_freezes_what_exists_and_collects_less_often():
    import gc

    from placement_wsgi import gc_pause

    thresholds = gc.get_threshold()
    try:
        gc_pause.for_a_long_run()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == gc_pause.LONG_RUN_THRESHOLDS
        assert gc.isenabled()  # cycles made afterwards are still collected
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
