"""A run's settings: one frozen record, checked once, the same for every worker."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from nova_reshape.cmd import render
from nova_reshape.compute import migrate
from nova_reshape.virt.releases import DriverOptions
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE


def test_the_defaults_are_a_real_run_of_the_default_target_in_bulk_batches():
    settings = migrate.Settings()
    assert (settings.dry_run, settings.options, settings.batch_size, settings.show) == (
        False, DriverOptions(), DEFAULT_BATCH_SIZE, None)


def test_settings_are_frozen_and_pickle_for_the_workers():
    settings = migrate.Settings(dry_run=True, options=DriverOptions(numa_in_placement=True),
                                batch_size=3, show=render.node_json)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.dry_run = False  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(settings)) == settings


@pytest.mark.parametrize("size", [0, -1])
def test_a_batch_needs_a_node(size):
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        migrate.Settings(batch_size=size)


def test_without_nova_conf_the_nodes_are_as_described():
    nodes = {"n": object()}
    assert migrate.with_nova_conf(nodes, DriverOptions()) == (nodes, {})  # type: ignore[arg-type]
