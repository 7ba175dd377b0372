"""A run's settings: checked when made, the same in every worker (they pickle)."""

from __future__ import annotations

import pickle

import pytest

from nova_reshape.compute.run_settings import Settings


def test_a_batch_of_no_nodes_is_refused_when_the_settings_are_made():
    with pytest.raises(ValueError, match="batch_size must be at least 1, not 0"):
        Settings(batch_size=0)


def test_settings_reach_a_worker_unchanged():
    settings = Settings(dry_run=True, batch_size=7, journal="run-1")
    assert pickle.loads(pickle.dumps(settings)) == settings
