"""accounts.session_generation: dashboard sessions revocable server-side

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch mode: SQLite cannot add a NOT NULL column in place; PostgreSQL can.
    with op.batch_alter_table('accounts') as batch:
        batch.add_column(
            sa.Column('session_generation', sa.Integer(), nullable=False, server_default='0')
        )


def downgrade() -> None:
    with op.batch_alter_table('accounts') as batch:
        batch.drop_column('session_generation')
