"""A device profile with an FPGA and a GPU group, shared by the accelerator tests."""

from __future__ import annotations

from nova_reshape.accelerator.device_profile import DeviceProfile

PROFILE = DeviceProfile("fpga-and-gpu", (
    {"resources:FPGA": "2", "trait:CUSTOM_FPGA_INTEL_PAC": "required",
     "trait:CUSTOM_OLD": "forbidden", "trait:CUSTOM_IGNORED": "preferred",
     "accel:bitstream_id": "abc"},
    {"resources1:PGPU": "1", "trait1:CUSTOM_A100": "required"},
))
