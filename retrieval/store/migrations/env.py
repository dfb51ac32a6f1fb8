"""Alembic's entry point for the workspace's migrations: run by `retrieval.store.workspace.open_workspace` on the
connection it passes in `config.attributes["connection"]` (there is no alembic.ini: the script location is set in
code, so an installed package migrates its store by itself)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=True, transaction_per_migration=True)
with context.begin_transaction():
    context.run_migrations()
