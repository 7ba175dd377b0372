"""Names shared by the service and the tools that talk to it.

Kept free of heavy imports so that client-side code (``nova_reshape``) can
use the same definitions without loading the service.
"""

from __future__ import annotations

from typing import Final

import os_traits

#: The trait that marks a provider as sharing its inventory with the
#: members of its aggregates.
SHARING_TRAIT: Final[str] = os_traits.MISC_SHARES_VIA_AGGREGATE
