"""Rule names and defaults (new and deprecated legacy check strings)."""

from __future__ import annotations

from oslo_policy import policy

from placement_wsgi.policy.names import Rule

_DEPRECATED_REASON = (
    "Placement moved to the admin, service and project-reader personas; the "
    "legacy default allowed role:admin everywhere.")
_DEPRECATED_SINCE = "Wallaby"

ADMIN_API = "admin_api"
SERVICE_API = "service_api"
ADMIN_OR_SERVICE_API = "admin_or_service_api"
PROJECT_READER_API = "project_reader_api"
ADMIN_OR_PROJECT_READER_OR_SERVICE_API = "admin_or_project_reader_or_service_api"

_LEGACY_ADMIN = "role:admin"


def _deprecated(name: str) -> policy.DeprecatedRule:
    return policy.DeprecatedRule(
        name=name, check_str=_LEGACY_ADMIN,
        deprecated_reason=_DEPRECATED_REASON, deprecated_since=_DEPRECATED_SINCE)


def _base_rules() -> list[policy.RuleDefault]:
    return [
        policy.RuleDefault(ADMIN_API, "role:admin",
                           description="Cloud administrators.", scope_types=["project"]),
        policy.RuleDefault(SERVICE_API, "role:service",
                           description="Other OpenStack services.", scope_types=["project"],
                           deprecated_rule=_deprecated(SERVICE_API)),
        policy.RuleDefault(ADMIN_OR_SERVICE_API, "role:admin or role:service",
                           description="Administrators or services.",
                           scope_types=["project"],
                           deprecated_rule=_deprecated(ADMIN_OR_SERVICE_API)),
        policy.RuleDefault(PROJECT_READER_API, "role:reader and project_id:%(project_id)s",
                           description="Readers of the target project.",
                           deprecated_rule=_deprecated(PROJECT_READER_API)),
        policy.RuleDefault(
            ADMIN_OR_PROJECT_READER_OR_SERVICE_API,
            f"role:admin or rule:{PROJECT_READER_API} or role:service",
            description="Administrators, services, or readers of the target project.",
            scope_types=["project"],
            deprecated_rule=_deprecated(ADMIN_OR_PROJECT_READER_OR_SERVICE_API)),
    ]


#: (rule name, HTTP operations, description); the default check is
#: ``rule:admin_or_service_api`` unless listed in _SPECIAL_DEFAULTS.
_ROUTE_RULES: list[tuple[str, list[tuple[str, str]], str]] = [
    (Rule.RESOURCE_PROVIDERS_LIST, [("GET", "/resource_providers")],
     "List resource providers."),
    (Rule.RESOURCE_PROVIDERS_CREATE, [("POST", "/resource_providers")],
     "Create a resource provider."),
    (Rule.RESOURCE_PROVIDERS_SHOW, [("GET", "/resource_providers/{uuid}")],
     "Show a resource provider."),
    (Rule.RESOURCE_PROVIDERS_UPDATE, [("PUT", "/resource_providers/{uuid}")],
     "Update a resource provider."),
    (Rule.RESOURCE_PROVIDERS_DELETE, [("DELETE", "/resource_providers/{uuid}")],
     "Delete a resource provider."),
    (Rule.RESOURCE_CLASSES_LIST, [("GET", "/resource_classes")],
     "List resource classes."),
    (Rule.RESOURCE_CLASSES_CREATE, [("POST", "/resource_classes")],
     "Create a resource class."),
    (Rule.RESOURCE_CLASSES_SHOW, [("GET", "/resource_classes/{name}")],
     "Show a resource class."),
    (Rule.RESOURCE_CLASSES_UPDATE, [("PUT", "/resource_classes/{name}")],
     "Create or rename a resource class."),
    (Rule.RESOURCE_CLASSES_DELETE, [("DELETE", "/resource_classes/{name}")],
     "Delete a resource class."),
    (Rule.RESOURCE_PROVIDERS_INVENTORIES_LIST,
     [("GET", "/resource_providers/{uuid}/inventories")], "List a provider's inventories."),
    (Rule.RESOURCE_PROVIDERS_INVENTORIES_CREATE,
     [("POST", "/resource_providers/{uuid}/inventories")], "Add one inventory."),
    (Rule.RESOURCE_PROVIDERS_INVENTORIES_SHOW,
     [("GET", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Show one inventory."),
    (Rule.RESOURCE_PROVIDERS_INVENTORIES_UPDATE,
     [("PUT", "/resource_providers/{uuid}/inventories"),
      ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Replace or update inventories."),
    (Rule.RESOURCE_PROVIDERS_INVENTORIES_DELETE,
     [("DELETE", "/resource_providers/{uuid}/inventories"),
      ("DELETE", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Delete inventories."),
    (Rule.RESOURCE_PROVIDERS_AGGREGATES_LIST,
     [("GET", "/resource_providers/{uuid}/aggregates")], "List a provider's aggregates."),
    (Rule.RESOURCE_PROVIDERS_AGGREGATES_UPDATE,
     [("PUT", "/resource_providers/{uuid}/aggregates")], "Replace a provider's aggregates."),
    (Rule.RESOURCE_PROVIDERS_USAGES,
     [("GET", "/resource_providers/{uuid}/usages")], "Show a provider's usages."),
    (Rule.USAGES, [("GET", "/usages")], "Show a project's (or user's) usages."),
    (Rule.TRAITS_LIST, [("GET", "/traits")], "List traits."),
    (Rule.TRAITS_SHOW, [("GET", "/traits/{name}")], "Check that a trait exists."),
    (Rule.TRAITS_UPDATE, [("PUT", "/traits/{name}")], "Create a custom trait."),
    (Rule.TRAITS_DELETE, [("DELETE", "/traits/{name}")], "Delete a custom trait."),
    (Rule.RESOURCE_PROVIDERS_TRAITS_LIST,
     [("GET", "/resource_providers/{uuid}/traits")], "List a provider's traits."),
    (Rule.RESOURCE_PROVIDERS_TRAITS_UPDATE,
     [("PUT", "/resource_providers/{uuid}/traits")], "Replace a provider's traits."),
    (Rule.RESOURCE_PROVIDERS_TRAITS_DELETE,
     [("DELETE", "/resource_providers/{uuid}/traits")], "Remove a provider's traits."),
    (Rule.ALLOCATIONS_MANAGE, [("POST", "/allocations")],
     "Write allocations of many consumers."),
    (Rule.ALLOCATIONS_LIST, [("GET", "/allocations/{consumer_uuid}")],
     "Show a consumer's allocations."),
    (Rule.ALLOCATIONS_UPDATE, [("PUT", "/allocations/{consumer_uuid}")],
     "Replace a consumer's allocations."),
    (Rule.ALLOCATIONS_DELETE, [("DELETE", "/allocations/{consumer_uuid}")],
     "Delete a consumer's allocations."),
    (Rule.RESOURCE_PROVIDERS_ALLOCATIONS_LIST,
     [("GET", "/resource_providers/{uuid}/allocations")], "List a provider's allocations."),
    (Rule.ALLOCATION_CANDIDATES_LIST, [("GET", "/allocation_candidates")],
     "List allocation candidates."),
    (Rule.RESHAPER_RESHAPE, [("POST", "/reshaper")],
     "Move inventories and allocations atomically."),
]

_SPECIAL_DEFAULTS = {
    Rule.USAGES: f"rule:{ADMIN_OR_PROJECT_READER_OR_SERVICE_API}",
    Rule.RESHAPER_RESHAPE: f"rule:{SERVICE_API}",
}


def list_rules() -> list[policy.RuleDefault]:
    """Every rule default, base rules first (also the oslo.policy entry point)."""
    rules: list[policy.RuleDefault] = _base_rules()
    for name, operations, description in _ROUTE_RULES:
        rules.append(policy.DocumentedRuleDefault(
            name=name,
            check_str=_SPECIAL_DEFAULTS.get(name, f"rule:{ADMIN_OR_SERVICE_API}"),
            description=description,
            operations=[{"method": method, "path": path} for method, path in operations],
            scope_types=["project"],
        ))
    return rules
