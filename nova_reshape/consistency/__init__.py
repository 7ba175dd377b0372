"""Placement made consistent with nova's databases, offline: nova-manage's placement checks.

``heal.py`` (with ``resources.py``, ``nested.py`` and ``placement_io.py``)
is ``heal_allocations``: the allocations nova 34 would write for instances
that have none or whose consumer lacks the instance's project or user,
decided from every cell's instances and Placement's allocations read in
bulk, then written in batches. See docs/consistency.md.
"""
