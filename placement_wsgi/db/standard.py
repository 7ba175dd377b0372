"""The standard traits (os-traits) and resource classes (os-resource-classes).

Loaded at every start; idempotent and safe when several processes run it at
once: only missing names are inserted, and a unique-constraint clash with a
concurrent loader is retried by the caller's transaction.
"""

from __future__ import annotations

import os_resource_classes
import os_traits
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.database import RetryTransaction

#: Custom resource classes get ids from here up; below it are standard ones.
FIRST_CUSTOM_RESOURCE_CLASS_ID = 10000


def sync_standard_names(connection: Connection) -> None:
    """Insert every standard trait and resource class missing from the DB."""
    now = tables.utcnow()
    known_traits = set(connection.execute(sa.select(tables.traits.c.name)).scalars())
    missing_traits = [name for name in os_traits.get_traits() if name not in known_traits]
    known_classes = set(connection.execute(
        sa.select(tables.resource_classes.c.name)).scalars())
    missing_classes = [
        {"id": index, "name": name, "created_at": now}
        for index, name in enumerate(os_resource_classes.STANDARDS)
        if name not in known_classes
    ]
    try:
        if missing_traits:
            connection.execute(tables.traits.insert(),
                               [{"name": name, "created_at": now} for name in missing_traits])
        if missing_classes:
            connection.execute(tables.resource_classes.insert(), missing_classes)
    except sa.exc.IntegrityError as error:
        raise RetryTransaction() from error
