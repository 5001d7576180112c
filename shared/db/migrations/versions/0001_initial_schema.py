"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('accounts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=True),
    sa.Column('per_minute', sa.Integer(), nullable=True),
    sa.Column('per_hour', sa.Integer(), nullable=True),
    sa.Column('per_day', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accounts')),
    sa.UniqueConstraint('email', name=op.f('uq_accounts_email'))
    )
    op.create_table('api_keys',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('prefix', sa.String(length=32), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_api_keys_account_id_accounts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_keys')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_api_keys_key_hash'))
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_keys_account_id'), ['account_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_api_keys_prefix'), ['prefix'], unique=False)

    op.create_table('credit_balances',
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('monthly', sa.Integer(), nullable=False),
    sa.Column('monthly_allowance', sa.Integer(), nullable=False),
    sa.Column('topup', sa.Integer(), nullable=False),
    sa.Column('renews_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_credit_balances_account_id_accounts')),
    sa.PrimaryKeyConstraint('account_id', name=op.f('pk_credit_balances'))
    )
    op.create_table('credit_ledger',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('monthly_delta', sa.Integer(), nullable=False),
    sa.Column('topup_delta', sa.Integer(), nullable=False),
    sa.Column('reservation_id', sa.String(length=36), nullable=True),
    sa.Column('note', sa.String(length=200), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_credit_ledger_account_id_accounts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_credit_ledger'))
    )
    with op.batch_alter_table('credit_ledger', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_credit_ledger_account_id'), ['account_id'], unique=False)

    op.create_table('credit_reservations',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('renews_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('settled_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_credit_reservations_account_id_accounts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_credit_reservations'))
    )
    with op.batch_alter_table('credit_reservations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_credit_reservations_account_id'), ['account_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_credit_reservations_status'), ['status'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('credit_reservations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_credit_reservations_status'))
        batch_op.drop_index(batch_op.f('ix_credit_reservations_account_id'))

    op.drop_table('credit_reservations')
    with op.batch_alter_table('credit_ledger', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_credit_ledger_account_id'))

    op.drop_table('credit_ledger')
    op.drop_table('credit_balances')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_keys_prefix'))
        batch_op.drop_index(batch_op.f('ix_api_keys_account_id'))

    op.drop_table('api_keys')
    op.drop_table('accounts')
