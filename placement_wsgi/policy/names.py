"""Policy rule names: one definition shared by the handlers and the rule table.

``Rule`` members are strings, so oslo.policy takes them as they are."""

from __future__ import annotations

from enum import StrEnum


class Rule(StrEnum):
    """The name of every route rule (``placement:<resource>:<action>``)."""

    RESOURCE_PROVIDERS_LIST = "placement:resource_providers:list"
    RESOURCE_PROVIDERS_CREATE = "placement:resource_providers:create"
    RESOURCE_PROVIDERS_SHOW = "placement:resource_providers:show"
    RESOURCE_PROVIDERS_UPDATE = "placement:resource_providers:update"
    RESOURCE_PROVIDERS_DELETE = "placement:resource_providers:delete"
    RESOURCE_CLASSES_LIST = "placement:resource_classes:list"
    RESOURCE_CLASSES_CREATE = "placement:resource_classes:create"
    RESOURCE_CLASSES_SHOW = "placement:resource_classes:show"
    RESOURCE_CLASSES_UPDATE = "placement:resource_classes:update"
    RESOURCE_CLASSES_DELETE = "placement:resource_classes:delete"
    RESOURCE_PROVIDERS_INVENTORIES_LIST = "placement:resource_providers:inventories:list"
    RESOURCE_PROVIDERS_INVENTORIES_CREATE = "placement:resource_providers:inventories:create"
    RESOURCE_PROVIDERS_INVENTORIES_SHOW = "placement:resource_providers:inventories:show"
    RESOURCE_PROVIDERS_INVENTORIES_UPDATE = "placement:resource_providers:inventories:update"
    RESOURCE_PROVIDERS_INVENTORIES_DELETE = "placement:resource_providers:inventories:delete"
    RESOURCE_PROVIDERS_AGGREGATES_LIST = "placement:resource_providers:aggregates:list"
    RESOURCE_PROVIDERS_AGGREGATES_UPDATE = "placement:resource_providers:aggregates:update"
    RESOURCE_PROVIDERS_USAGES = "placement:resource_providers:usages"
    USAGES = "placement:usages"
    TRAITS_LIST = "placement:traits:list"
    TRAITS_SHOW = "placement:traits:show"
    TRAITS_UPDATE = "placement:traits:update"
    TRAITS_DELETE = "placement:traits:delete"
    RESOURCE_PROVIDERS_TRAITS_LIST = "placement:resource_providers:traits:list"
    RESOURCE_PROVIDERS_TRAITS_UPDATE = "placement:resource_providers:traits:update"
    RESOURCE_PROVIDERS_TRAITS_DELETE = "placement:resource_providers:traits:delete"
    ALLOCATIONS_MANAGE = "placement:allocations:manage"
    ALLOCATIONS_LIST = "placement:allocations:list"
    ALLOCATIONS_UPDATE = "placement:allocations:update"
    ALLOCATIONS_DELETE = "placement:allocations:delete"
    RESOURCE_PROVIDERS_ALLOCATIONS_LIST = "placement:resource_providers:allocations:list"
    ALLOCATION_CANDIDATES_LIST = "placement:allocation_candidates:list"
    RESHAPER_RESHAPE = "placement:reshaper:reshape"
