"""Per-provider setters of the report client: inventory, traits, aggregates.

Each setter is one self-contained exchange: skip when the cached provider
already matches, write with the cached (or given) generation, store what
Placement answered in the cache, and turn a 409 into
``ResourceProviderUpdateConflict`` (or ``InventoryInUse``).
:class:`ProviderSetters` is given the session it sends through, the cache
it checks and updates, and the :class:`~nova_reshape.report.providers.Providers`
that create resource classes and traits before they are used.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from nova_reshape import exception
from nova_reshape.report.cache import ProviderCache
from nova_reshape.report.providers import Providers
from nova_reshape.report.session import (
    AGGREGATE_GENERATION_VERSION,
    ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
    PlacementSession,
    error_of,
)

LOG = logging.getLogger(__name__)


class ProviderSetters:
    """Write one provider's inventory, traits or aggregates, keeping the cache in step."""

    def __init__(self, session: PlacementSession, cache: ProviderCache,
                 providers: Providers) -> None:
        self.session = session
        self.cache = cache
        self.providers = providers

    def set_inventory_for_provider(self, context: object, rp_uuid: str,
                                   inv_data: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the provider's inventory (``{}`` clears it) unless already equal."""
        if not self.cache.tree.has_inventory_changed(rp_uuid, inv_data):
            return
        self.providers.ensure_resource_classes(context, inv_data)
        url = f"/resource_providers/{rp_uuid}/inventories"
        generation = self.cache.tree.data(rp_uuid).generation
        payload = {"resource_provider_generation": generation,
                   "inventories": dict(inv_data or {})}
        response = self.session.put(url, payload,
                                    version=ALLOW_RESERVED_EQUAL_TOTAL_INVENTORY_VERSION,
                                    context=context)
        if response.status_code == 200:
            data = response.json()
            self.cache.tree.update_inventory(
                rp_uuid, data["inventories"], generation=data["resource_provider_generation"])
            return
        LOG.error("Failed to update inventory to [%s] for resource provider with UUID %s. "
                  "Got %s: %s", inv_data, rp_uuid, response.status_code, response.text)
        if response.status_code == 409:
            error = error_of(response)
            if error.get("code") == "placement.inventory.inuse":
                raise exception.InventoryInUse(error.get("detail", response.text))
            raise exception.ResourceProviderUpdateConflict(
                uuid=rp_uuid, generation=generation, error=response.text)
        raise exception.ResourceProviderUpdateFailed(url=url, error=response.text)

    def set_traits_for_provider(self, context: object, rp_uuid: str, traits: Iterable[str],
                                generation: int | None = None) -> None:
        """Replace the provider's traits unless already equal (creating traits first)."""
        traits = list(traits or [])
        if not self.cache.tree.have_traits_changed(rp_uuid, traits):
            return
        self.providers.ensure_traits(context, traits)
        url = f"/resource_providers/{rp_uuid}/traits"
        generation = generation or self.cache.tree.data(rp_uuid).generation
        payload = {"resource_provider_generation": generation, "traits": sorted(set(traits))}
        response = self.session.put(url, payload, version="1.6", context=context)
        if response.status_code == 200:
            data = response.json()
            self.cache.tree.update_traits(
                rp_uuid, data["traits"], generation=data["resource_provider_generation"])
            return
        LOG.error("Failed to update traits of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        if response.status_code == 409:
            raise exception.ResourceProviderUpdateConflict(
                uuid=rp_uuid, generation=generation, error=response.text)
        raise exception.ResourceProviderUpdateFailed(url=url, error=response.text)

    def set_aggregates_for_provider(self, context: object, rp_uuid: str,
                                    aggregates: Iterable[str], use_cache: bool = True,
                                    generation: int | None = None) -> None:
        """Replace the provider's aggregates.

        Skipped when the cached generation equals ``generation`` and the
        aggregates are unchanged. ``use_cache=False`` needs ``generation``
        (ValueError otherwise) and works for uncached providers.
        """
        aggregates = list(aggregates or [])
        if generation is None:
            if not use_cache:
                raise ValueError("generation is required with use_cache=False")
            generation = self.cache.tree.data(rp_uuid).generation
        with contextlib.suppress(ValueError):
            if (self.cache.tree.data(rp_uuid).generation == generation
                    and not self.cache.tree.have_aggregates_changed(rp_uuid, aggregates)):
                return
        url = f"/resource_providers/{rp_uuid}/aggregates"
        payload = {"aggregates": sorted(set(aggregates)),
                   "resource_provider_generation": generation}
        response = self.session.put(url, payload, version=AGGREGATE_GENERATION_VERSION,
                                    context=context)
        if response.status_code == 200:
            data = response.json()
            try:
                self.cache.tree.update_aggregates(
                    rp_uuid, data["aggregates"], generation=data["resource_provider_generation"])
            except ValueError:
                if use_cache:
                    raise
            return
        LOG.error("Failed to update aggregates of provider %s: %s %s", rp_uuid,
                  response.status_code, response.text)
        if response.status_code == 409:
            # Whatever we cached is stale; read it again next time.
            self.cache.invalidate(rp_uuid)
            raise exception.ResourceProviderUpdateConflict(
                uuid=rp_uuid, generation=generation, error=response.text)
        raise exception.ResourceProviderUpdateFailed(url=url, error=response.text)
