"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6+)."""

from __future__ import annotations

import webob

from placement_wsgi import errors, microversion, util
from placement_wsgi.handlers.common import context_of
from placement_wsgi.objects import trait as trait_obj
from placement_wsgi.policy.names import Rule
from placement_wsgi.schemas import trait as schema

_INVALID_TRAIT = (
    'The trait is invalid. A valid trait must be no longer than 255 characters, start with '
    'the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"')


@microversion.minimum(1, 6)
def list_traits(request: webob.Request) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.TRAITS_LIST)
    query = util.validate_query(request, schema.LIST_TRAITS_QUERY)
    names = prefix = associated = None
    if "name" in query:
        operator, sep, operand = query["name"].partition(":")
        if not sep:
            raise errors.BadRequest(
                "Badly formatted name parameter. Expected name query string parameter in "
                'form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "%s"' % query["name"])
        if operator == "in":
            names = [name for name in operand.split(",")]
        elif operator == "startswith":
            prefix = operand
    if "associated" in query:
        value = query["associated"].lower()
        if value not in ("true", "false"):
            raise errors.BadRequest(
                'The query parameter "associated" only accepts "true" or "false"')
        associated = value == "true"
    traits = trait_obj.list_traits(context.database, names, prefix, associated)
    return util.json_response(
        request, {"traits": [trait.name for trait in traits]},
        last_modified=util.newest(trait.modified_at for trait in traits))


@microversion.minimum(1, 6)
def get_trait(request: webob.Request, name: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.TRAITS_SHOW)
    trait = trait_obj.get_trait(context.database, name)
    response = util.empty_response(204)
    util.add_cache_headers(request, response, trait.created_at)
    return response


@microversion.minimum(1, 6)
def put_trait(request: webob.Request, name: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.TRAITS_UPDATE)
    if not trait_obj.is_valid_custom_name(name):
        raise errors.BadRequest(_INVALID_TRAIT)
    trait, created = trait_obj.ensure_trait(context.database, name)
    response = util.empty_response(
        201 if created else 204, location=util.absolute_url(request, f"/traits/{name}"))
    util.add_cache_headers(request, response, trait.created_at)
    return response


@microversion.minimum(1, 6)
def delete_trait(request: webob.Request, name: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.TRAITS_DELETE)
    trait_obj.delete_trait(context.database, name)
    return util.empty_response(204)


def _provider_traits_body(traits: trait_obj.ProviderTraits) -> dict:
    return {"traits": traits.names, "resource_provider_generation": traits.generation}


@microversion.minimum(1, 6)
def list_traits_for_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    util.check_accept_json(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_TRAITS_LIST)
    traits = trait_obj.get_provider_traits(context.database, uuid)
    return util.json_response(request, _provider_traits_body(traits),
                              last_modified=traits.modified_at)


@microversion.minimum(1, 6)
def update_traits_for_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    util.require_json_content(request)
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_TRAITS_UPDATE)
    data = util.json_body(request, schema.SET_PROVIDER_TRAITS)
    traits = trait_obj.set_provider_traits(
        context.database, uuid, data["traits"], data["resource_provider_generation"])
    return util.json_response(request, _provider_traits_body(traits),
                              last_modified=traits.modified_at)


@microversion.minimum(1, 6)
def delete_traits_for_resource_provider(request: webob.Request, uuid: str) -> webob.Response:
    context = context_of(request)
    context.can(Rule.RESOURCE_PROVIDERS_TRAITS_DELETE)
    trait_obj.delete_provider_traits(context.database, uuid)
    return util.empty_response(204)
