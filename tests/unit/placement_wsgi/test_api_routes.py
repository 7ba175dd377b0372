"""The test-side description of every route stays in step with the router."""

from __future__ import annotations

from placement_wsgi import router
from tests.fixtures import api_routes


def test_every_declared_route_and_method_is_described() -> None:
    declared = {(template, method)
                for template, methods in router.ROUTE_DECLARATIONS.items()
                for method in methods}
    assert declared == set(api_routes.ROUTE_INPUTS)


def test_every_write_route_with_a_body_is_known() -> None:
    # PUT /traits/{name} and, from 1.7, PUT /resource_classes/{name} read no body.
    assert sorted(api_routes.body_routes()) == sorted([
        ("/resource_classes", "POST"),
        ("/resource_classes/{name}", "PUT"),
        ("/resource_providers", "POST"),
        ("/resource_providers/{uuid}", "PUT"),
        ("/resource_providers/{uuid}/inventories", "POST"),
        ("/resource_providers/{uuid}/inventories", "PUT"),
        ("/resource_providers/{uuid}/inventories/{resource_class}", "PUT"),
        ("/resource_providers/{uuid}/aggregates", "PUT"),
        ("/resource_providers/{uuid}/traits", "PUT"),
        ("/allocations", "POST"),
        ("/allocations/{consumer_uuid}", "PUT"),
        ("/reshaper", "POST"),
    ])
