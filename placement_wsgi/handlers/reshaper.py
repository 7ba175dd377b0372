"""POST /reshaper (1.30+)."""

from __future__ import annotations

import webob

from placement_wsgi import microversion, util
from placement_wsgi.handlers import inventory
from placement_wsgi.handlers.allocation import consumer_request
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects import reshaper as reshaper_obj
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import reshaper as schema


@microversion.minimum(1, 30)
def reshape(request: webob.Request) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESHAPER_RESHAPE)
    version = microversion.version_of(request)
    data = util.json_body(request, schema.reshaper_schema(version))
    targets = [
        inventory_obj.ProviderInventories(
            provider_uuid=uuid,
            generation=entry["resource_provider_generation"],
            inventories=inventory.records_from_put(uuid, entry["inventories"]),
        )
        for uuid, entry in data["inventories"].items()
    ]
    allocations = [consumer_request(request, consumer_uuid, entry)
                   for consumer_uuid, entry in data["allocations"].items()]
    conf = context.conf.placement
    reshaper_obj.reshape(
        context.database, targets, allocations,
        set_consumer_type=version >= (1, 38),
        incomplete_project=conf.incomplete_consumer_project_id,
        incomplete_user=conf.incomplete_consumer_user_id,
    )
    return util.empty_response(204)
