"""The names nova accepts for an architecture, a hypervisor type and a VM mode.

Image properties (``hw_architecture``, ``img_hv_type``, ``hw_vm_mode``),
``[filter_scheduler] image_properties_default_architecture`` and a host's
supported instances use these canonical names.
"""

from __future__ import annotations

ARCHITECTURES = frozenset({
    "alpha", "armv6", "armv7l", "armv7b", "aarch64", "cris", "i686", "ia64", "lm32",
    "m68k", "microblaze", "microblazeel", "mips", "mipsel", "mips64", "mips64el",
    "openrisc", "parisc", "parisc64", "ppc", "ppcle", "ppc64", "ppc64le", "ppcemb",
    "s390", "s390x", "sh4", "sh4eb", "sparc", "sparc64", "unicore32", "x86_64",
    "xtensa", "xtensaeb",
})
HV_TYPES = frozenset({
    "baremetal", "bhyve", "docker", "fake", "hyperv", "ironic", "kqemu", "kvm", "lxc",
    "lxd", "openvz", "parallels", "virtuozzo", "phyp", "qemu", "test", "uml", "vbox",
    "vmware", "xen", "zvm", "powervm",
})
VM_MODES = frozenset({"hvm", "xen", "uml", "exe"})
