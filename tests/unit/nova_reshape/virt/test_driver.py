"""The virt driver base the resource tracker calls (virt/driver.py)."""

from __future__ import annotations

import pytest

from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.driver import ComputeDriver


def test_a_driver_must_say_how_it_updates_the_tree():
    with pytest.raises(NotImplementedError):
        ComputeDriver().update_provider_tree(ProviderTree(), "cmp-07")


def test_no_capability_traits_by_default():
    assert ComputeDriver().capabilities_as_traits() == {}
