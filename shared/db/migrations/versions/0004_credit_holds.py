"""credit holds, usage by outcome, anchored billing cycles, job deadlines

One model of held credits (`credit_holds`) replaces the reservation row per
credit (`credit_reservations`) and the hold columns of `jobs`; open
reservations and job holds move into it. Usage moves out of the money ledger
into `credit_usage`; the ledger keeps money movements only. Balances get the
anchor of their billing cycles; jobs store their deadline.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""
import uuid
from datetime import timedelta

from alembic import op
import sqlalchemy as sa
from dateutil.relativedelta import relativedelta

from shared.db.base import UTCDateTime


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

# The defaults of RESERVATION_TTL_SECONDS and JOB_DEADLINE_SECONDS when this
# migration was written: rows stored before it get the expiry and deadline
# those defaults gave them.
RESERVATION_TTL = timedelta(minutes=15)
JOB_DEADLINE = timedelta(hours=24)
USAGE_BATCH = 10_000

accounts = sa.table('accounts', sa.column('id', sa.Integer), sa.column('created_at', UTCDateTime))
balances = sa.table(
    'credit_balances',
    sa.column('account_id', sa.Integer),
    sa.column('opened_at', UTCDateTime),
    sa.column('renews_at', UTCDateTime),
)
reservations = sa.table(
    'credit_reservations',
    sa.column('id', sa.String),
    sa.column('account_id', sa.Integer),
    sa.column('source', sa.String),
    sa.column('status', sa.String),
    sa.column('renews_at', UTCDateTime),
    sa.column('created_at', UTCDateTime),
    sa.column('settled_at', UTCDateTime),
)
holds = sa.table(
    'credit_holds',
    sa.column('id', sa.String),
    sa.column('account_id', sa.Integer),
    sa.column('monthly', sa.Integer),
    sa.column('topup', sa.Integer),
    sa.column('renews_at', UTCDateTime),
    sa.column('consumed', sa.Integer),
    sa.column('refunded', sa.Integer),
    sa.column('expires_at', UTCDateTime),
    sa.column('created_at', UTCDateTime),
)
ledger = sa.table(
    'credit_ledger',
    sa.column('id', sa.Integer),
    sa.column('account_id', sa.Integer),
    sa.column('kind', sa.String),
    sa.column('monthly_delta', sa.Integer),
    sa.column('topup_delta', sa.Integer),
    sa.column('reservation_id', sa.String),
    sa.column('hold_id', sa.String),
    sa.column('note', sa.String),
    sa.column('created_at', UTCDateTime),
)
usage = sa.table(
    'credit_usage',
    sa.column('account_id', sa.Integer),
    sa.column('day', sa.Date),
    sa.column('outcome', sa.String),
    sa.column('count', sa.Integer),
    sa.column('created_at', UTCDateTime),
)
jobs = sa.table(
    'jobs',
    sa.column('id', sa.String),
    sa.column('account_id', sa.Integer),
    sa.column('done', sa.Integer),
    sa.column('failed', sa.Integer),
    sa.column('cancelled', sa.Integer),
    sa.column('hold_monthly', sa.Integer),
    sa.column('hold_topup', sa.Integer),
    sa.column('hold_renews_at', UTCDateTime),
    sa.column('hold_id', sa.String),
    sa.column('created_at', UTCDateTime),
    sa.column('deadline_at', UTCDateTime),
)


def upgrade() -> None:
    op.create_table('credit_holds',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('monthly', sa.Integer(), nullable=False),
    sa.Column('topup', sa.Integer(), nullable=False),
    sa.Column('renews_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('consumed', sa.Integer(), nullable=False),
    sa.Column('refunded', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_credit_holds_account_id_accounts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_credit_holds'))
    )
    with op.batch_alter_table('credit_holds', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_credit_holds_account_id'), ['account_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_credit_holds_expires_at'), ['expires_at'], unique=False)

    op.create_table('credit_usage',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_credit_usage_account_id_accounts')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_credit_usage'))
    )
    with op.batch_alter_table('credit_usage', schema=None) as batch_op:
        batch_op.create_index('ix_credit_usage_account_id_day', ['account_id', 'day'], unique=False)

    with op.batch_alter_table('credit_balances', schema=None) as batch_op:
        batch_op.add_column(sa.Column('opened_at', sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table('credit_ledger', schema=None) as batch_op:
        batch_op.add_column(sa.Column('hold_id', sa.String(length=36), nullable=True))
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('hold_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('deadline_at', sa.DateTime(timezone=True), nullable=True))

    connection = op.get_bind()
    renewals = _anchor_balances(connection)
    _move_open_reservations(connection, renewals)
    _move_job_holds(connection, renewals)
    _move_usage_out_of_the_ledger(connection)

    with op.batch_alter_table('credit_balances', schema=None) as batch_op:
        batch_op.alter_column('opened_at', existing_type=sa.DateTime(timezone=True), nullable=False)
    with op.batch_alter_table('credit_ledger', schema=None) as batch_op:
        batch_op.drop_column('reservation_id')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.alter_column('hold_id', existing_type=sa.String(length=36), nullable=False)
        batch_op.alter_column('deadline_at', existing_type=sa.DateTime(timezone=True), nullable=False)
        batch_op.create_foreign_key(batch_op.f('fk_jobs_hold_id_credit_holds'), 'credit_holds', ['hold_id'], ['id'])
        batch_op.drop_column('hold_renews_at')
        batch_op.drop_column('hold_monthly')
        batch_op.drop_column('hold_topup')
    with op.batch_alter_table('credit_reservations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_credit_reservations_account_id'))
        batch_op.drop_index(batch_op.f('ix_credit_reservations_status'))
    op.drop_table('credit_reservations')


def _anchor_balances(connection) -> dict:
    """Anchor each balance on its account's opening; its renewal on that anchor.

    The renewal moves to the anchor's first boundary after the day before the
    stored one: a moment earlier for most, a few days later for a balance
    whose chained renewals drifted (opened on the 31st, renewing on the 28th).
    Answers {(account, old renews_at): new renews_at}, for the holds of this cycle.
    """
    rows = connection.execute(
        sa.select(balances.c.account_id, balances.c.renews_at, accounts.c.created_at).join(
            accounts, accounts.c.id == balances.c.account_id
        )
    ).all()
    renewals = {}
    for account_id, renews_at, opened_at in rows:
        renewals[account_id, renews_at] = _first_boundary_after(opened_at, renews_at - timedelta(days=1))
        connection.execute(
            balances.update()
            .where(balances.c.account_id == account_id)
            .values(opened_at=opened_at, renews_at=renewals[account_id, renews_at])
        )
    return renewals


def _first_boundary_after(opened_at, moment):
    # The boundary in the month of `moment`, or the next one.
    months = max(1, (moment.year - opened_at.year) * 12 + moment.month - opened_at.month)
    while opened_at + relativedelta(months=months) <= moment:
        months += 1
    return opened_at + relativedelta(months=months)


def _move_open_reservations(connection, renewals: dict) -> None:
    """Each open reservation becomes a hold of one credit, with the same id."""
    rows = connection.execute(
        sa.select(reservations).where(reservations.c.status == 'reserved')
    ).all()
    for row in rows:
        connection.execute(
            holds.insert().values(
                id=row.id,
                account_id=row.account_id,
                monthly=int(row.source == 'monthly'),
                topup=int(row.source == 'topup'),
                renews_at=renewals.get((row.account_id, row.renews_at), row.renews_at),
                consumed=0,
                refunded=0,
                expires_at=row.created_at + RESERVATION_TTL,
                created_at=row.created_at,
            )
        )


def _move_job_holds(connection, renewals: dict) -> None:
    """Each job's hold columns become a hold; its ended items, that hold's counters."""
    for job in connection.execute(sa.select(jobs)).all():
        hold_id = str(uuid.uuid4())
        connection.execute(
            holds.insert().values(
                id=hold_id,
                account_id=job.account_id,
                monthly=job.hold_monthly,
                topup=job.hold_topup,
                renews_at=renewals.get((job.account_id, job.hold_renews_at), job.hold_renews_at),
                consumed=job.done,
                refunded=job.failed + job.cancelled,
                expires_at=None,
                created_at=job.created_at,
            )
        )
        connection.execute(
            jobs.update()
            .where(jobs.c.id == job.id)
            .values(hold_id=hold_id, deadline_at=job.created_at + JOB_DEADLINE)
        )


def _move_usage_out_of_the_ledger(connection) -> None:
    """Each consume entry (no money moved) becomes a usage record; each refund, failed usage.

    The ledger then holds money movements only: consume entries go, reserve
    entries are named holds, and entries point at their hold.
    """
    rows = connection.execute(
        sa.select(ledger).where(ledger.c.kind.in_(('consume', 'refund'))),
        execution_options={'yield_per': USAGE_BATCH},
    )
    # In batches: a ledger holds a consume entry per bulk item ever classified.
    for batch in rows.partitions():
        connection.execute(
            usage.insert(),
            [
                {
                    'account_id': row.account_id,
                    'day': row.created_at.date(),
                    'outcome': _outcome(row),
                    # A bulk job refunded many credits in one entry.
                    'count': 1 if row.kind == 'consume' else max(1, row.monthly_delta + row.topup_delta),
                    'created_at': row.created_at,
                }
                for row in batch
            ],
        )
    connection.execute(ledger.delete().where(ledger.c.kind == 'consume'))
    connection.execute(ledger.update().where(ledger.c.kind == 'reserve').values(kind='hold'))
    connection.execute(ledger.update().values(hold_id=ledger.c.reservation_id))


def _outcome(entry) -> str:
    if entry.kind == 'refund':
        return 'failed'
    return 'found' if entry.note == 'found' else 'not_found'


def downgrade() -> None:
    raise NotImplementedError(
        'credit holds cannot be split back into a reservation per credit: restore a backup'
    )
