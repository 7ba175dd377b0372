"""Operator tags to resource class and trait names, as nova normalizes them (virt/names.py)."""

from __future__ import annotations

import pytest

from nova_reshape.virt.names import normalize_resource_class, normalize_trait


@pytest.mark.parametrize(("tag", "name"), [
    ("nvidia-11", "CUSTOM_NVIDIA_11"),
    ("a100", "CUSTOM_A100"),
    ("VGPU", "VGPU"),                 # standard class kept
    ("pgpu", "PGPU"),                 # standard once upper-cased
    ("custom_fpga", "CUSTOM_FPGA"),   # already custom
])
def test_resource_classes(tag, name):
    assert normalize_resource_class(tag) == name


@pytest.mark.parametrize(("tag", "name"), [
    ("gold", "CUSTOM_GOLD"),
    ("hw_cpu_x86_avx2", "HW_CPU_X86_AVX2"),  # standard trait kept
    ("CUSTOM_x.y", "CUSTOM_X_Y"),
])
def test_traits(tag, name):
    assert normalize_trait(tag) == name
