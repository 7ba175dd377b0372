"""Names resolved once per request: unknown classes and traits are 400s, in Placement's order."""

from __future__ import annotations

import pytest

from placement_wsgi import errors
from tests.functional.placement_wsgi.candidates.world import World


def test_unknown_names(two_computes: World) -> None:
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1,CUSTOM_NOPE:1")
    assert caught.value.message == (
        "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.")
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1&required=CUSTOM_Z,!CUSTOM_Y")
    assert caught.value.message == "No such trait(s): CUSTOM_Y, CUSTOM_Z."
    with pytest.raises(errors.BadRequest) as caught:  # root_required first
        two_computes.candidates("resources=CUSTOM_NOPE:1&root_required=CUSTOM_W")
    assert caught.value.message == "No such trait(s): CUSTOM_W."
