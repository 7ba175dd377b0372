"""/resource_providers and /resource_providers/{uuid}.

Handlers parse the request in the API's check order, call
objects.resource_provider and shape the representation for the request's
microversion.
"""

from __future__ import annotations

import webob

from placement_wsgi import query, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.microversion import Version, version_of
from placement_wsgi.objects import resource_provider as rp_obj
from placement_wsgi.objects.provider_lookup import ResourceProvider
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import resource_provider as schema

#: (relation, microversion it appears at), in the order the links are listed.
_LINKS = [
    ("inventories", (1, 0)),
    ("usages", (1, 0)),
    ("aggregates", (1, 1)),
    ("traits", (1, 6)),
    ("allocations", (1, 11)),
]


def _representation(request: webob.Request, provider: ResourceProvider,
                    version: Version) -> dict:
    """The provider as the request's microversion shows it."""
    base = f"/resource_providers/{provider.uuid}"
    links = [{"rel": "self", "href": util.link(request, base)}]
    links.extend({"rel": rel, "href": util.link(request, f"{base}/{rel}")}
                 for rel, since in _LINKS if version >= since)
    data = {"uuid": provider.uuid, "name": provider.name,
            "generation": provider.generation}
    if version >= (1, 14):
        data["parent_provider_uuid"] = provider.parent_provider_uuid
        data["root_provider_uuid"] = provider.root_provider_uuid
    data["links"] = links
    return data


def _filters(request: webob.Request, version: Version) -> rp_obj.ProviderFilters:
    """Validate and parse the list query string: schema first, then each grammar."""
    params = util.validate_query(request, schema.list_query_schema_for(version))
    filters = rp_obj.ProviderFilters(name=params.get("name") or None, uuid=params.get("uuid"),
                                     in_tree=params.get("in_tree"))
    if "member_of" in params:
        filters.member_of = query.parse_member_of(request.GET.getall("member_of"), version)
    if "resources" in params:
        filters.resources = query.parse_resources(params["resources"])
    if "required" in params:
        filters.required = query.parse_required(request.GET.getall("required"), version)
    return filters


def list_resource_providers(request: webob.Request) -> webob.Response:
    """GET /resource_providers: every provider matching all given filters."""
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_LIST)
    version = version_of(request)
    providers = rp_obj.list_resource_providers(context.database, _filters(request, version))
    return util.json_response(
        request,
        {"resource_providers": [_representation(request, provider, version)
                                for provider in providers]},
        last_modified=util.newest(provider.modified_at for provider in providers))


def create_resource_provider(request: webob.Request) -> webob.Response:
    """POST /resource_providers: 201 empty before 1.20, 200 with the provider from 1.20."""
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_CREATE)
    version = version_of(request)
    data = util.json_body(request, schema.create_schema_for(version))
    provider = rp_obj.create_resource_provider(
        context.database, data["name"], data.get("uuid"), data.get("parent_provider_uuid"))
    location = util.absolute_url(request, f"/resource_providers/{provider.uuid}")
    if version < (1, 20):
        return util.empty_response(201, location=location)
    response = util.json_response(request, _representation(request, provider, version),
                                  last_modified=provider.modified_at)
    response.location = location
    return response


def get_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    """GET /resource_providers/{uuid}."""
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_SHOW)
    provider = rp_obj.get_resource_provider(context.database, uuid)
    return util.json_response(
        request, _representation(request, provider, version_of(request)),
        last_modified=provider.modified_at)


def update_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    """PUT /resource_providers/{uuid}: rename, set/change/remove the parent.

    Order: content-type, policy, 404, body, parent rules, name clash.
    """
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_UPDATE)
    rp_obj.get_resource_provider(context.database, uuid)
    version = version_of(request)
    data = util.json_body(request, schema.update_schema_for(version))
    provider = rp_obj.update_resource_provider(
        context.database, uuid, data["name"],
        data.get("parent_provider_uuid", rp_obj.UNCHANGED),
        allow_reparenting=version >= (1, 37))
    # Last-Modified is the time of this update: now.
    return util.json_response(request, _representation(request, provider, version))


def delete_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    """DELETE /resource_providers/{uuid}: 204, or 404/409 (children, allocations)."""
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_DELETE)
    rp_obj.delete_resource_provider(context.database, uuid)
    return util.empty_response(204)
