"""/resource_providers/{uuid}/inventories[/{resource_class}].

Handlers parse and format; the decisions (capacity, in use, generations)
are in :mod:`placement_wsgi.objects.inventory`. Routes that read a body
look the provider up first, because a missing provider (404) wins over a
bad body (400).
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import webob

from placement_wsgi import errors, microversion, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects.provider_lookup import require_provider
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import inventory as schema

_CLASS_NAME = re.compile(schema.RESOURCE_CLASS_PATTERN)
_RECORD_VALIDATOR = jsonschema.Draft4Validator(schema.INVENTORY_RECORD)


def _provider_not_found(uuid: str) -> str:
    """The GET routes repeat the lookup's message after ``" : "``."""
    message = f"No resource provider with uuid {uuid} found"
    return f"{message} : {message}"


def _record_body(result: inventory_obj.ProviderInventory) -> dict[str, Any]:
    return {**result.inventory.as_dict(),
            "resource_provider_generation": result.generation}


def _collection_body(generation: int, records: list[inventory_obj.Inventory]) -> dict[str, Any]:
    return {
        "resource_provider_generation": generation,
        "inventories": {record.resource_class: record.as_dict() for record in records},
    }


def records_from_put(uuid: str, inventories: dict[str, Any]) -> list[inventory_obj.Inventory]:
    """Records of a PUT body (or one provider of a reshape), in body order.

    Keys not shaped like class names escaped the schema; they can never name
    a class, so a malformed record under one is reported as the unknown
    class it is (a well-formed one fails the same way, after capacity).
    """
    records = []
    for name, data in inventories.items():
        if not _CLASS_NAME.match(name) and not _RECORD_VALIDATOR.is_valid(data):
            raise errors.BadRequest(
                f"Unknown resource class in inventory for resource provider {uuid}: "
                f"{rc_obj.no_such_class(name)}")
        records.append(inventory_obj.Inventory.from_body(name, data))
    return records


def get_inventories(request: webob.Request, uuid: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_LIST)
    result = inventory_obj.list_inventories(context.database, uuid, _provider_not_found(uuid))
    # Upstream sends no Last-Modified (but Cache-Control) for an empty list.
    return util.json_response(
        request, _collection_body(result.generation, result.inventories),
        last_modified=result.modified_at, omit_last_modified=not result.inventories)


def create_inventory(request: webob.Request, uuid: str) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_CREATE)
    require_provider(context.database, uuid)
    data = util.json_body(request, schema.CREATE_INVENTORY)
    record = inventory_obj.Inventory.from_body(data["resource_class"], data)
    result = inventory_obj.create_inventory(
        context.database, uuid, record, microversion.version_of(request))
    response = util.json_response(request, _record_body(result), status=201)
    response.location = util.absolute_url(
        request, f"/resource_providers/{uuid}/inventories/{record.resource_class}")
    return response


def set_inventories(request: webob.Request, uuid: str) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_UPDATE)
    require_provider(context.database, uuid)
    data = util.json_body(request, schema.SET_INVENTORIES)
    records = records_from_put(uuid, data["inventories"])
    result = inventory_obj.set_inventories(
        context.database, uuid, data["resource_provider_generation"], records,
        microversion.version_of(request))
    return util.json_response(
        request, _collection_body(result.generation, result.inventories),
        omit_last_modified=not result.inventories)


@microversion.minimum(1, 5, status_405=True)
def delete_inventories(request: webob.Request, uuid: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_DELETE)
    inventory_obj.delete_inventories(context.database, uuid)
    return util.empty_response(204)


def get_inventory(request: webob.Request, uuid: str, resource_class: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_SHOW)
    result = inventory_obj.get_inventory(
        context.database, uuid, resource_class, _provider_not_found(uuid))
    return util.json_response(request, _record_body(result),
                              last_modified=result.inventory.modified_at)


def update_inventory(request: webob.Request, uuid: str, resource_class: str) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_UPDATE)
    require_provider(context.database, uuid)
    data = util.json_body(request, schema.UPDATE_INVENTORY)
    record = inventory_obj.Inventory.from_body(resource_class, data)
    result = inventory_obj.update_inventory(
        context.database, uuid, data["resource_provider_generation"], record,
        microversion.version_of(request))
    return util.json_response(request, _record_body(result))


def delete_inventory(request: webob.Request, uuid: str, resource_class: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_INVENTORIES_DELETE)
    inventory_obj.delete_inventory(context.database, uuid, resource_class)
    return util.empty_response(204)
