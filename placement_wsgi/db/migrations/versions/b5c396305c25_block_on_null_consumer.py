"""Refuse to upgrade while an allocation has no consumers row (data check only).

Revision ID: b5c396305c25
"""

import sqlalchemy as sa
from alembic import op

revision = "b5c396305c25"
down_revision = "611cd6dffd7b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    count = op.get_bind().execute(sa.text(
        "SELECT COUNT(*) FROM allocations a LEFT JOIN consumers c "
        "ON a.consumer_id = c.uuid WHERE c.id IS NULL")).scalar()
    if count:
        raise RuntimeError(
            f"{count} allocations have no consumer record; run "
            "placement-manage db online_data_migrations, then db sync again.")
