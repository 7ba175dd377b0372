"""nova's scheduler report client, cut on its seams (the package face).

* :mod:`~nova_reshape.report.client`: :class:`SchedulerReportClient`, the
  methods nova's resource tracker calls, and the tree sync;
* :mod:`~nova_reshape.report.cache`: :class:`ProviderCache`, the cached
  provider trees and their refresh rule;
* :mod:`~nova_reshape.report.session`: :class:`PlacementSession`, the one
  send path over the transport's ``request()``, microversions, Placement's
  error body, ``@safe_connect`` and ``@retries``;
* :mod:`~nova_reshape.report.providers`: provider reads, creation,
  deletion, resource classes and traits, the cache refresh;
* :mod:`~nova_reshape.report.setters`: per-provider inventory, traits and
  aggregates;
* :mod:`~nova_reshape.report.allocations`: candidates, allocations, usages
  and the reshape.

The client builds its collaborators and hands each the ones it needs; no
module reaches for another's attributes. Import the public names from here.
"""

from __future__ import annotations

from nova_reshape.report.allocations import Allocations, ProviderAllocInfo
from nova_reshape.report.cache import ProviderCache
from nova_reshape.report.client import SchedulerReportClient
from nova_reshape.report.providers import AggInfo, Providers, TraitInfo
from nova_reshape.report.session import (
    AGGREGATE_GENERATION_VERSION,
    ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
    CONSUMER_GENERATION_VERSION,
    GET_USAGES_VERSION,
    NESTED_PROVIDER_API_VERSION,
    POST_RPS_RETURNS_PAYLOAD_API_VERSION,
    RESHAPER_VERSION,
    SAME_SUBTREE_VERSION,
    PlacementSession,
    Retry,
    error_of,
    retries,
    safe_connect,
)
from nova_reshape.report.setters import ProviderSetters
from nova_reshape.transport import Placement, http_placement

__all__ = [
    "AGGREGATE_GENERATION_VERSION", "ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION",
    "CONSUMER_GENERATION_VERSION", "GET_USAGES_VERSION", "NESTED_PROVIDER_API_VERSION",
    "POST_RPS_RETURNS_PAYLOAD_API_VERSION", "RESHAPER_VERSION", "SAME_SUBTREE_VERSION",
    "AggInfo", "Allocations", "Placement", "PlacementSession", "ProviderAllocInfo",
    "ProviderCache", "ProviderSetters", "Providers", "Retry", "SchedulerReportClient",
    "TraitInfo", "error_of", "http_placement", "retries", "safe_connect",
]
