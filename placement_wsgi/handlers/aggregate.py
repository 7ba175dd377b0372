"""/resource_providers/{uuid}/aggregates (1.1+).

Unlike most routes, these check Accept / Content-Type *before* the
microversion gate, so each public handler does that
check and then calls its gated body.
"""

from __future__ import annotations

import webob

from placement_wsgi import microversion, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects.provider_lookup import require_provider
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import aggregate as schema


def _body(request: webob.Request, aggregates: aggregate_obj.ProviderAggregates) -> dict:
    data: dict = {"aggregates": aggregates.uuids}
    if microversion.version_of(request) >= (1, 19):
        data["resource_provider_generation"] = aggregates.generation
    return data


def get_aggregates(request: webob.Request, uuid: str) -> webob.Response:
    util.check_accept_json(request)
    return _get_aggregates(request, uuid)


@microversion.minimum(1, 1)
def _get_aggregates(request: webob.Request, uuid: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_AGGREGATES_LIST)
    aggregates = aggregate_obj.get_provider_aggregates(context.database, uuid)
    return util.json_response(request, _body(request, aggregates))


def set_aggregates(request: webob.Request, uuid: str) -> webob.Response:
    util.require_json_content(request)
    return _set_aggregates(request, uuid)


@microversion.minimum(1, 1)
def _set_aggregates(request: webob.Request, uuid: str) -> webob.Response:
    """Order: policy, provider 404, body, then (1.19+) generation, then write."""
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_AGGREGATES_UPDATE)
    require_provider(context.database, uuid)
    if microversion.version_of(request) >= (1, 19):
        data = util.json_body(request, schema.SET_AGGREGATES_V1_19)
        uuids, generation = data["aggregates"], data["resource_provider_generation"]
    else:
        uuids, generation = util.json_body(request, schema.SET_AGGREGATES_V1_1), None
    aggregates = aggregate_obj.set_provider_aggregates(
        context.database, uuid, uuids, generation)
    return util.json_response(request, _body(request, aggregates))
