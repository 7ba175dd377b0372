"""Refuse to upgrade while a provider has no root_provider_id (data check only).

Revision ID: 611cd6dffd7b
"""

import sqlalchemy as sa
from alembic import op

revision = "611cd6dffd7b"
down_revision = "b4ed3a175331"
branch_labels = None
depends_on = None


def upgrade() -> None:
    count = op.get_bind().execute(sa.text(
        "SELECT COUNT(*) FROM resource_providers WHERE root_provider_id IS NULL")).scalar()
    if count:
        raise RuntimeError(
            f"{count} resource providers have no root_provider_id; run "
            "placement-manage db online_data_migrations, then db sync again.")
