"""The report client's provider cache: a ProviderTree and when each provider was read.

No requests here: the cache holds what the client last read from or wrote
to Placement (:attr:`ProviderCache.tree`) and, per provider, the time its
inventory, traits and aggregates were last read (:attr:`ProviderCache.refresh_times`).
The refresh rule is :meth:`ProviderCache.stale`: a provider never read is
stale; after ``association_refresh`` seconds it is stale again, unless that
is 0 (nova's "never again once read").
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Callable

from nova_reshape.provider_tree import ProviderTree

LOG = logging.getLogger(__name__)


class ProviderCache:
    """The cached provider trees and their association refresh times.

    ``association_refresh``: nova's ``[compute]
    resource_provider_association_refresh`` (seconds, >= 0). ``clock``: the
    time source of the refresh times (tests may pass their own).
    """

    def __init__(self, association_refresh: int = 300,
                 clock: Callable[[], float] = time.time) -> None:
        if association_refresh < 0:
            raise ValueError("association_refresh must be >= 0")
        self.association_refresh = association_refresh
        self.clock = clock
        self.tree = ProviderTree()
        self.refresh_times: dict[str, float] = {}

    def clear(self, init: bool = False) -> None:
        """Forget every cached provider and refresh time (a new, empty tree)."""
        if not init:
            LOG.info("Clearing the report client's provider cache.")
        self.tree = ProviderTree()
        self.refresh_times = {}

    def clear_tree(self, rp_uuid: str) -> None:
        """Forget the whole tree containing ``rp_uuid`` (no-op if not cached)."""
        if not self.tree.exists(rp_uuid):
            return
        uuids = self.tree.get_provider_uuids_in_tree(rp_uuid)
        LOG.info("Clearing the cached provider tree rooted at %s", uuids[0])
        for uuid in uuids:
            self.refresh_times.pop(uuid, None)
        self.tree.remove(uuids[0])

    def invalidate(self, name_or_uuid: str, cacheonly: bool = False) -> None:
        """Forget a provider's refresh time and (unless ``cacheonly``) the provider."""
        if not cacheonly:
            with contextlib.suppress(ValueError):
                self.tree.remove(name_or_uuid)
        self.refresh_times.pop(name_or_uuid, None)

    def stale(self, uuid: str) -> bool:
        """Whether ``uuid``'s inventory, traits and aggregates are due to be read."""
        refreshed = self.refresh_times.get(uuid)
        if refreshed is None:
            return True
        if self.association_refresh == 0:
            return False
        return self.clock() - refreshed > self.association_refresh

    def mark_refreshed(self, uuid: str) -> None:
        """Record that ``uuid``'s associations were read (or are known) now."""
        self.refresh_times[uuid] = self.clock()

    def snapshot(self) -> ProviderTree:
        """A deep copy of the cached trees, for a caller (the driver) to edit."""
        return copy.deepcopy(self.tree)
