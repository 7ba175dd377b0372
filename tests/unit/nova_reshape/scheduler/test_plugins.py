"""The one plug-in loader (scheduler/plugins.py): what a configuration entry stands for,
for a kind of its own and for the filters and weighers."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.errors import PluginNotFound
from nova_reshape.scheduler.filters import FILTERS, ComputeFilter
from nova_reshape.scheduler.plugins import PluginKind
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


class Base:
    """The kind's base class."""


class First(Base):
    pass


class Second(Base):
    pass


class ThirdParty(Base):
    """Loaded by dotted path, as an operator's own plug-in would be."""


def both() -> list[type]:
    return [ThirdParty, First]


def not_a_list_of_plugins() -> list[type]:
    return [dict]


HERE = __name__
KIND = PluginKind(noun="gadget", base=Base, builtins=(First, Second),
                  all_paths=frozenset({"nova.gadgets.all_gadgets"}),
                  nova_package="nova.gadgets")


def test_the_all_path_is_every_builtin_in_order():
    assert KIND.resolve("nova.gadgets.all_gadgets") == [First, Second]


def test_nova_paths_name_builtins_bare_names_only_when_the_kind_allows():
    assert KIND.resolve("nova.gadgets.second.Second") == [Second]
    with pytest.raises(PluginNotFound, match="unknown gadget 'Second': expected a dotted path"):
        KIND.resolve("Second")
    bare = PluginKind("gadget", Base, (First,), frozenset(), "nova.gadgets", bare_names=True)
    assert bare.resolve("First") == [First] and bare.builtin("Second") is None


def test_other_paths_are_imported_classes_or_callables():
    assert KIND.resolve(f"{HERE}.ThirdParty") == [ThirdParty]
    assert KIND.resolve(f"{HERE}.both") == [ThirdParty, First]


@pytest.mark.parametrize(("entry", "message"), [
    ("no_such_module.Thing", "cannot load gadget 'no_such_module.Thing'"),
    (f"{HERE}.Missing", "cannot load gadget"),
    (f"{HERE}.HERE", "is neither a gadget class nor a callable"),
    (f"{HERE}.not_a_list_of_plugins", "is not a Base subclass"),
    ("collections.OrderedDict", "is not a Base subclass"),
])
def test_what_cannot_be_a_plugin(entry, message):
    with pytest.raises(PluginNotFound, match=message):
        KIND.resolve(entry)
