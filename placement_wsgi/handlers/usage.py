"""GET /resource_providers/{uuid}/usages and GET /usages."""

from __future__ import annotations

from typing import Any

import webob

from placement_wsgi import microversion, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import usage as usage_obj
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import usage as schema


def list_usages(request: webob.Request, uuid: str) -> webob.Response:
    """A provider's usage of every class it has inventory of."""
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_USAGES)
    message = f"No resource provider with uuid {uuid} found"
    result = usage_obj.get_provider_usages(context.database, uuid, f"{message}: {message}")
    return util.json_response(
        request, {"resource_provider_generation": result.generation, "usages": result.usages})


@microversion.minimum(1, 9)
def get_total_usages(request: webob.Request) -> webob.Response:
    """A project's (or project user's) usage; grouped by consumer type from 1.38."""
    util.check_accept_json(request)
    context = context_of(request)
    # The policy target is the project asked about, so a project reader may
    # see its own project's usage; checked before the query is validated.
    context.can(Rule.USAGES, target={"project_id": request.GET.get("project_id")})
    version = microversion.version_of(request)
    grouped = version >= (1, 38)
    query = util.validate_query(
        request, schema.TOTAL_USAGES_QUERY_1_38 if grouped else schema.TOTAL_USAGES_QUERY)
    project_id = query["project_id"]
    user_id = query.get("user_id")
    usages: dict[str, Any]
    if grouped:
        groups = usage_obj.get_usages_by_consumer_type(
            context.database, project_id, user_id, query.get("consumer_type"))
        usages = {name: {**group.usages, "consumer_count": group.consumer_count}
                  for name, group in groups.items()}
    else:
        usages = usage_obj.get_total_usages(context.database, project_id, user_id)
    return util.json_response(request, {"usages": usages})
