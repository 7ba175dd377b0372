"""The default request body limit admits a reshape of 1,000 providers with margin.

``[oslo_middleware] max_request_body_size`` defaults to
:data:`placement_wsgi.conf.DEFAULT_MAX_REQUEST_BODY_SIZE` here (oslo.middleware's
own 112 KiB would refuse a reshape of a few dozen providers). The body built
below is the largest shape the default is meant for: 1,000 providers of six
resource classes, ten consumers per provider, each allocating on two
providers, with every optional field of microversion 1.38 filled in.
"""

from __future__ import annotations

import json
import pathlib
import uuid

from placement_wsgi import conf as placement_conf
from placement_wsgi.schemas import reshaper as reshaper_schema
from placement_wsgi.util import validate
from tests.fixtures.config import make_conf

_CLASSES = ["VCPU", "MEMORY_MB", "DISK_GB", "VGPU", "CUSTOM_PCI_10DE_1EB8",
            "CUSTOM_FPGA_INTEL_ARRIA10"]


def reshaper_body(providers: int, consumers_per_provider: int) -> dict:
    uuids = [str(uuid.uuid4()) for _ in range(providers)]
    inventories = {
        provider: {"resource_provider_generation": 123456, "inventories": {
            name: {"total": 131072, "reserved": 512, "min_unit": 1, "max_unit": 131072,
                   "step_size": 1, "allocation_ratio": 16.0} for name in _CLASSES}}
        for provider in uuids}
    allocations = {}
    for index, provider in enumerate(uuids):
        neighbour = uuids[(index + 1) % providers]
        for _ in range(consumers_per_provider):
            allocations[str(uuid.uuid4())] = {
                "allocations": {
                    provider: {"resources": {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 80}},
                    neighbour: {"resources": {"VGPU": 1}}},
                "project_id": uuid.uuid4().hex, "user_id": uuid.uuid4().hex,
                "consumer_generation": 12, "consumer_type": "INSTANCE"}
    return {"inventories": inventories, "allocations": allocations}


def test_default_limit_is_three_times_a_1000_provider_reshape() -> None:
    body = reshaper_body(1000, 10)
    validate(body, reshaper_schema.RESHAPER_V1_38, "")
    size = len(json.dumps(body).encode())
    assert size > 4 * 1024 * 1024  # the shape is as large as described
    assert size * 3 <= placement_conf.DEFAULT_MAX_REQUEST_BODY_SIZE


def test_the_service_default_replaces_oslo_middlewares() -> None:
    conf = make_conf("sqlite://")
    assert conf.oslo_middleware.max_request_body_size == (
        placement_conf.DEFAULT_MAX_REQUEST_BODY_SIZE)
    assert placement_conf.max_request_body_size(conf) == (
        placement_conf.DEFAULT_MAX_REQUEST_BODY_SIZE)


def test_zero_turns_the_limit_off() -> None:
    conf = make_conf("sqlite://", oslo_middleware={"max_request_body_size": 0})
    assert placement_conf.max_request_body_size(conf) is None


def test_the_default_is_documented() -> None:
    root = pathlib.Path(__file__).resolve().parents[3]
    default = placement_conf.DEFAULT_MAX_REQUEST_BODY_SIZE
    docs = (root / "docs" / "configuration.md").read_text()
    assert f"| `max_request_body_size` | `{default}` (16 MiB) |" in docs
    sample = (root / "etc" / "placement.conf").read_text()
    assert f"#max_request_body_size = {default}" in sample
