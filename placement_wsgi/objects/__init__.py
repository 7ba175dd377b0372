"""Domain logic: decisions and storage calls, one module per resource.

Functions here take a :class:`placement_wsgi.db.database.Database` and plain
values, return plain records, and raise :mod:`placement_wsgi.errors` values.
They never see WebOb.
"""
