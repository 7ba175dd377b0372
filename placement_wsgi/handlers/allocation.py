"""/allocations/{consumer_uuid}, POST /allocations and
/resource_providers/{uuid}/allocations."""

from __future__ import annotations

from typing import Any

import webob

from placement_wsgi import errors, microversion, util, uuids
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import allocation as schema


def list_for_consumer(request: webob.Request, consumer_uuid: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.ALLOCATIONS_LIST)
    version = microversion.version_of(request)
    view = allocation_obj.get_consumer_allocations(context.database, consumer_uuid)
    body: dict[str, Any] = {"allocations": view.allocations}
    if view.allocations:
        if version >= (1, 12):
            body["project_id"] = view.project_id
            body["user_id"] = view.user_id
        if version >= (1, 28):
            body["consumer_generation"] = view.generation
        if version >= (1, 38):
            body["consumer_type"] = view.consumer_type
    return util.json_response(request, body, last_modified=view.last_modified)


def list_for_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_ALLOCATIONS_LIST)
    try:
        view = allocation_obj.get_provider_allocations(context.database, uuid)
    except errors.NotFound as error:
        raise errors.NotFound(f"Resource provider '{uuid}' not found: {error}") from error
    allocations = view.allocations
    if microversion.version_of(request) < (1, 28):
        allocations = {consumer: {"resources": entry["resources"]}
                       for consumer, entry in allocations.items()}
    return util.json_response(
        request, {"resource_provider_generation": view.generation, "allocations": allocations},
        last_modified=view.last_modified)


def consumer_request(request: webob.Request, consumer_uuid: str,
                      data: dict[str, Any]) -> allocation_obj.ConsumerAllocations:
    """The body of one consumer (PUT body or one POST entry) as a write request."""
    version = microversion.version_of(request)
    raw = data["allocations"]
    if isinstance(raw, list):  # list format, below 1.12: the last entry per provider wins
        allocations = {item["resource_provider"]["uuid"]: dict(item["resources"])
                       for item in raw}
    else:
        allocations = {uuid: dict(entry["resources"]) for uuid, entry in raw.items()}
    return allocation_obj.ConsumerAllocations(
        consumer_uuid=consumer_uuid,
        project_id=data.get("project_id", ""),
        user_id=data.get("user_id", ""),
        allocations=allocations,
        consumer_generation=(data["consumer_generation"] if version >= (1, 28)
                             else allocation_obj.UNCHECKED),
        consumer_type=data.get("consumer_type"),
    )


def _write(request: webob.Request, requests: list[allocation_obj.ConsumerAllocations],
           unknown_class_prefix: str) -> None:
    context = context_of(request)
    conf = context.conf.placement
    allocation_obj.write_allocations(
        context.database, requests,
        unknown_class_prefix=unknown_class_prefix,
        set_consumer_type=microversion.version_of(request) >= (1, 38),
        incomplete_project=conf.incomplete_consumer_project_id,
        incomplete_user=conf.incomplete_consumer_user_id,
        retries=conf.allocation_conflict_retry_count,
    )


def set_allocations_for_consumer(request: webob.Request, consumer_uuid: str) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.ALLOCATIONS_UPDATE)
    if not uuids.is_lenient_uuid(consumer_uuid):
        raise errors.BadRequest(f"Malformed consumer_uuid: {consumer_uuid}")
    consumer_uuid = uuids.canonical_uuid(consumer_uuid)
    data = util.json_body(request, schema.put_schema(microversion.version_of(request)))
    write = consumer_request(request, consumer_uuid, data)
    _write(request, [write],
           f"Unable to allocate inventory for consumer {consumer_uuid}: ")
    return util.empty_response(204)


@microversion.minimum(1, 13)
def set_allocations(request: webob.Request) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.ALLOCATIONS_MANAGE)
    data = util.json_body(request, schema.post_schema(microversion.version_of(request)))
    writes = [consumer_request(request, consumer_uuid, entry)
              for consumer_uuid, entry in data.items()]
    _write(request, writes, "Unable to allocate inventory ")
    return util.empty_response(204)


def delete_allocations(request: webob.Request, consumer_uuid: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.ALLOCATIONS_DELETE)
    allocation_obj.delete_consumer_allocations(context.database, consumer_uuid)
    return util.empty_response(204)
