"""What every request pre-filter shares (prefilters/base.py)."""

from __future__ import annotations

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.errors import SchedulerError
from nova_reshape.scheduler.image import image_properties
from nova_reshape.scheduler.prefilters.base import (
    RequestFilterFailed,
    aggregate_id,
    destination,
    flavor_or_image,
)
from nova_reshape.scheduler.request_spec import ImageMeta, RequestSpec


def test_destination_is_created_once_when_missing():
    spec = RequestSpec()
    created = destination(spec)
    assert spec.requested_destination is created and destination(spec) is created


def test_an_aggregate_is_named_by_uuid_else_by_name():
    assert aggregate_id(Aggregate("az1", frozenset(), {}, uuid="u1")) == "u1"
    assert aggregate_id(Aggregate("az1", frozenset(), {})) == "az1"


def test_flavor_or_image_value_and_a_conflict_refuses():
    flavor = Flavor(extra_specs={"hw:virtio_packed_ring": "true"})
    agreeing = RequestSpec(flavor=flavor)
    assert flavor_or_image(agreeing, "virtio_packed_ring") == "true"
    assert flavor_or_image(RequestSpec(), "virtio_packed_ring") is None
    conflicting = RequestSpec(flavor=flavor, image=ImageMeta(
        properties=image_properties({"hw_virtio_packed_ring": "false"})))
    with pytest.raises(RequestFilterFailed, match="conflicts") as info:
        flavor_or_image(conflicting, "virtio_packed_ring")
    assert isinstance(info.value, SchedulerError) and info.value.steps == []
