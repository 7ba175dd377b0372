"""URL routing: the route table and 404/405 rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import routes
import webob
import webob.dec

from placement_wsgi import errors
from placement_wsgi.handlers import (
    aggregate,
    allocation,
    allocation_candidate,
    inventory,
    reshaper,
    resource_class,
    resource_provider,
    root,
    trait,
    usage,
)

Handler = Callable[..., webob.Response]

#: path -> {method: handler}; method order is the order of the Allow header.
ROUTE_DECLARATIONS: dict[str, dict[str, Handler]] = {
    "/": {"GET": root.home},
    "": {"GET": root.home},
    "/resource_classes": {
        "GET": resource_class.list_resource_classes,
        "POST": resource_class.create_resource_class,
    },
    "/resource_classes/{name}": {
        "GET": resource_class.get_resource_class,
        "PUT": resource_class.update_resource_class,
        "DELETE": resource_class.delete_resource_class,
    },
    "/resource_providers": {
        "GET": resource_provider.list_resource_providers,
        "POST": resource_provider.create_resource_provider,
    },
    "/resource_providers/{uuid}": {
        "GET": resource_provider.get_resource_provider,
        "DELETE": resource_provider.delete_resource_provider,
        "PUT": resource_provider.update_resource_provider,
    },
    "/resource_providers/{uuid}/inventories": {
        "GET": inventory.get_inventories,
        "POST": inventory.create_inventory,
        "PUT": inventory.set_inventories,
        "DELETE": inventory.delete_inventories,
    },
    "/resource_providers/{uuid}/inventories/{resource_class}": {
        "GET": inventory.get_inventory,
        "PUT": inventory.update_inventory,
        "DELETE": inventory.delete_inventory,
    },
    "/resource_providers/{uuid}/usages": {"GET": usage.list_usages},
    "/resource_providers/{uuid}/aggregates": {
        "GET": aggregate.get_aggregates,
        "PUT": aggregate.set_aggregates,
    },
    "/resource_providers/{uuid}/allocations": {
        "GET": allocation.list_for_resource_provider,
    },
    "/resource_providers/{uuid}/traits": {
        "GET": trait.list_traits_for_resource_provider,
        "PUT": trait.update_traits_for_resource_provider,
        "DELETE": trait.delete_traits_for_resource_provider,
    },
    "/allocations": {"POST": allocation.set_allocations},
    "/allocations/{consumer_uuid}": {
        "GET": allocation.list_for_consumer,
        "PUT": allocation.set_allocations_for_consumer,
        "DELETE": allocation.delete_allocations,
    },
    "/allocation_candidates": {"GET": allocation_candidate.list_allocation_candidates},
    "/traits": {"GET": trait.list_traits},
    "/traits/{name}": {
        "GET": trait.get_trait,
        "PUT": trait.put_trait,
        "DELETE": trait.delete_trait,
    },
    "/usages": {"GET": usage.get_total_usages},
    "/reshaper": {"POST": reshaper.reshape},
}


def _make_mapper() -> routes.Mapper:
    mapper = routes.Mapper()
    for path in ROUTE_DECLARATIONS:
        mapper.connect(path, path_template=path,
                       requirements={"uuid": "[^/]+", "name": "[^/]+",
                                     "resource_class": "[^/]+", "consumer_uuid": "[^/]+"})
    return mapper


class Router:
    """Dispatch to the handler of (path, method), or answer 404/405."""

    def __init__(self) -> None:
        self.mapper = _make_mapper()

    @webob.dec.wsgify
    def __call__(self, request: webob.Request) -> Any:
        match = self.mapper.match(request.path_info)
        if match is None:
            raise errors.NotFound("")
        methods = ROUTE_DECLARATIONS[match.pop("path_template")]
        handler = methods.get(request.method)
        if handler is None:
            allow = ", ".join(methods)
            raise errors.MethodNotAllowed(
                "The method specified is not allowed for this resource.",
                headers={"Allow": allow})
        return handler(request, **match)
