"""The one home of an inventory record's capacity.

``(total - reserved) * allocation_ratio`` is how much of a resource class a
provider can hand out. Writes (allocations) compare usage against the exact
product; what reads report and what the candidate engine offers is that
product truncated to an integer (:func:`truncated`). The same function
builds the SQL expression: given SQLAlchemy columns it returns a column
expression, so the query-side filter and the Python-side checks cannot drift
apart. The candidate engine reads the product computed that way (with the
ratio as the driver reads it: ``placement_wsgi.db.rows.INVENTORY_CAPACITY``):
SQLite, PostgreSQL and MariaDB multiply the same two doubles as Python does,
so the product is the same float (``tests/functional/placement_wsgi/db/
test_capacity_sql.py``).

No imports beyond typing: tools outside the service (the reshape
invariants) use it too without loading the service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def capacity(total: Any, reserved: Any, allocation_ratio: Any) -> Any:
    """``(total - reserved) * allocation_ratio``: a float for numbers, an SQL
    expression for columns."""
    return (total - reserved) * allocation_ratio


#: What reads report and candidates offer of a :func:`capacity` product: the
#: product truncated toward zero. The builtin itself, not a function around it:
#: the candidate engine calls it once per inventory row it shows. For an integer
#: ``n >= 1`` (usage plus a request), ``n <= product`` exactly when
#: ``n <= truncated(product)``: checks may use either.
truncated: Callable[[float], int] = int


def usable(total: int, reserved: int, allocation_ratio: float) -> int:
    """The capacity reads report and candidates offer: :func:`capacity` truncated."""
    return truncated(capacity(total, reserved, allocation_ratio))
