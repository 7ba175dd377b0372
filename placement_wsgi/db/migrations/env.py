"""Alembic environment: runs on the connection handed in by ``migration``."""

from alembic import context

from placement_wsgi.db.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
