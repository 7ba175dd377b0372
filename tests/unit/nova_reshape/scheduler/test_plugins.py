"""The one plug-in loader: what a configuration entry stands for, for each kind."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.errors import PluginNotFound
from nova_reshape.scheduler.filters import FILTERS, ComputeFilter
from nova_reshape.scheduler.weights import WEIGHERS, RAMWeigher
from tests.unit.nova_reshape.scheduler.thirdparty import (
    NameLengthWeigher,
    OddNameFilter,
    RackFilter,
)

THIRD = "tests.unit.nova_reshape.scheduler.thirdparty"


def test_third_party_classes_load_by_dotted_path():
    assert FILTERS.resolve(f"{THIRD}.OddNameFilter") == [OddNameFilter]
    assert FILTERS.resolve(f"{THIRD}.my_filters") == [OddNameFilter, RackFilter]
    assert WEIGHERS.resolve(f"{THIRD}.NameLengthWeigher") == [NameLengthWeigher]


def test_a_class_of_the_other_kind_is_refused():
    with pytest.raises(PluginNotFound, match="is not a BaseHostFilter subclass"):
        FILTERS.resolve(f"{THIRD}.NameLengthWeigher")
    with pytest.raises(PluginNotFound, match="is not a BaseHostWeigher subclass"):
        WEIGHERS.resolve(f"{THIRD}.my_filters")


def test_nova_paths_name_builtins_and_bare_names_only_for_weighers():
    assert FILTERS.resolve("nova.scheduler.filters.compute_filter.ComputeFilter") == \
        [ComputeFilter]
    assert WEIGHERS.resolve("RAMWeigher") == [RAMWeigher]
    with pytest.raises(PluginNotFound, match="expected a dotted path"):
        FILTERS.resolve("ComputeFilter")
