"""The canonical names of architectures, hypervisor types and VM modes."""

from __future__ import annotations

import pytest

from nova_reshape.nova import hypervisor
from nova_reshape.scheduler import image
from nova_reshape.scheduler.errors import ScenarioError


def test_the_names_are_lower_case_and_distinct_per_kind():
    for names in (hypervisor.ARCHITECTURES, hypervisor.HV_TYPES, hypervisor.VM_MODES):
        assert all(name == name.lower() for name in names)
    assert {"x86_64", "aarch64", "ppc64le", "s390x"} <= hypervisor.ARCHITECTURES
    assert {"kvm", "qemu", "ironic"} <= hypervisor.HV_TYPES
    assert hypervisor.VM_MODES == {"hvm", "xen", "uml", "exe"}


@pytest.mark.parametrize(("canonical", "value", "name"), [
    (image.canonical_arch, "X86_64", "x86_64"), (image.canonical_arch, "i386", "i686"),
    (image.canonical_hv_type, "xapi", "xen"), (image.canonical_vm_mode, "hv", "hvm"),
])
def test_the_scheduler_maps_aliases_onto_these_names(canonical, value, name):
    assert canonical(value) == name


@pytest.mark.parametrize("canonical", [image.canonical_arch, image.canonical_hv_type,
                                       image.canonical_vm_mode])
def test_a_name_outside_the_sets_is_refused(canonical):
    with pytest.raises(ScenarioError, match="invalid"):
        canonical("pdp11")
