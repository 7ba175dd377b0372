"""Rule names and defaults (new and deprecated legacy check strings)."""

from __future__ import annotations

from oslo_policy import policy

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
    ("placement:resource_providers:list", [("GET", "/resource_providers")],
     "List resource providers."),
    ("placement:resource_providers:create", [("POST", "/resource_providers")],
     "Create a resource provider."),
    ("placement:resource_providers:show", [("GET", "/resource_providers/{uuid}")],
     "Show a resource provider."),
    ("placement:resource_providers:update", [("PUT", "/resource_providers/{uuid}")],
     "Update a resource provider."),
    ("placement:resource_providers:delete", [("DELETE", "/resource_providers/{uuid}")],
     "Delete a resource provider."),
    ("placement:resource_classes:list", [("GET", "/resource_classes")],
     "List resource classes."),
    ("placement:resource_classes:create", [("POST", "/resource_classes")],
     "Create a resource class."),
    ("placement:resource_classes:show", [("GET", "/resource_classes/{name}")],
     "Show a resource class."),
    ("placement:resource_classes:update", [("PUT", "/resource_classes/{name}")],
     "Create or rename a resource class."),
    ("placement:resource_classes:delete", [("DELETE", "/resource_classes/{name}")],
     "Delete a resource class."),
    ("placement:resource_providers:inventories:list",
     [("GET", "/resource_providers/{uuid}/inventories")], "List a provider's inventories."),
    ("placement:resource_providers:inventories:create",
     [("POST", "/resource_providers/{uuid}/inventories")], "Add one inventory."),
    ("placement:resource_providers:inventories:show",
     [("GET", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Show one inventory."),
    ("placement:resource_providers:inventories:update",
     [("PUT", "/resource_providers/{uuid}/inventories"),
      ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Replace or update inventories."),
    ("placement:resource_providers:inventories:delete",
     [("DELETE", "/resource_providers/{uuid}/inventories"),
      ("DELETE", "/resource_providers/{uuid}/inventories/{resource_class}")],
     "Delete inventories."),
    ("placement:resource_providers:aggregates:list",
     [("GET", "/resource_providers/{uuid}/aggregates")], "List a provider's aggregates."),
    ("placement:resource_providers:aggregates:update",
     [("PUT", "/resource_providers/{uuid}/aggregates")], "Replace a provider's aggregates."),
    ("placement:resource_providers:usages",
     [("GET", "/resource_providers/{uuid}/usages")], "Show a provider's usages."),
    ("placement:usages", [("GET", "/usages")], "Show a project's (or user's) usages."),
    ("placement:traits:list", [("GET", "/traits")], "List traits."),
    ("placement:traits:show", [("GET", "/traits/{name}")], "Check that a trait exists."),
    ("placement:traits:update", [("PUT", "/traits/{name}")], "Create a custom trait."),
    ("placement:traits:delete", [("DELETE", "/traits/{name}")], "Delete a custom trait."),
    ("placement:resource_providers:traits:list",
     [("GET", "/resource_providers/{uuid}/traits")], "List a provider's traits."),
    ("placement:resource_providers:traits:update",
     [("PUT", "/resource_providers/{uuid}/traits")], "Replace a provider's traits."),
    ("placement:resource_providers:traits:delete",
     [("DELETE", "/resource_providers/{uuid}/traits")], "Remove a provider's traits."),
    ("placement:allocations:manage", [("POST", "/allocations")],
     "Write allocations of many consumers."),
    ("placement:allocations:list", [("GET", "/allocations/{consumer_uuid}")],
     "Show a consumer's allocations."),
    ("placement:allocations:update", [("PUT", "/allocations/{consumer_uuid}")],
     "Replace a consumer's allocations."),
    ("placement:allocations:delete", [("DELETE", "/allocations/{consumer_uuid}")],
     "Delete a consumer's allocations."),
    ("placement:resource_providers:allocations:list",
     [("GET", "/resource_providers/{uuid}/allocations")], "List a provider's allocations."),
    ("placement:allocation_candidates:list", [("GET", "/allocation_candidates")],
     "List allocation candidates."),
    ("placement:reshaper:reshape", [("POST", "/reshaper")],
     "Move inventories and allocations atomically."),
]

_SPECIAL_DEFAULTS = {
    "placement:usages": f"rule:{ADMIN_OR_PROJECT_READER_OR_SERVICE_API}",
    "placement:reshaper:reshape": f"rule:{SERVICE_API}",
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
