"""The columns of nova's API database that the offline tools read.

Flavors, host aggregates and the cell and host mappings live in the API
database (``nova_api``), not in a cell. As for the cell (:mod:`.tables`):
explicit definitions of only the columns read, names as in nova's
``nova/db/api/models.py``. These tables have no soft-delete column: a
deleted row is gone.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

flavors = sa.Table(
    "flavors", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("flavorid", sa.String(255)),
    sa.Column("name", sa.String(255)),
    sa.Column("vcpus", sa.Integer),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("swap", sa.Integer),
)

flavor_extra_specs = sa.Table(
    "flavor_extra_specs", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("flavor_id", sa.Integer),
    sa.Column("key", sa.String(255)),
    sa.Column("value", sa.String(255)),
)

aggregates = sa.Table(
    "aggregates", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
)

aggregate_hosts = sa.Table(
    "aggregate_hosts", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("aggregate_id", sa.Integer),
)

aggregate_metadata = sa.Table(
    "aggregate_metadata", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("aggregate_id", sa.Integer),
    sa.Column("key", sa.String(255)),
    sa.Column("value", sa.String(255)),
)

# Where each cell's database is (a template nova fills, or a URL), and which
# compute service host is in which cell (``nova-manage cell_v2 discover_hosts``).
cell_mappings = sa.Table(
    "cell_mappings", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    sa.Column("transport_url", sa.Text),
    sa.Column("database_connection", sa.Text),
)

host_mappings = sa.Table(
    "host_mappings", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cell_id", sa.Integer),
    sa.Column("host", sa.String(255)),
)
