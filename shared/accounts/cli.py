"""`taxonomist accounts ...` and `taxonomist keys ...`: operator commands."""

from __future__ import annotations

import sys

from shared.accounts import service
from shared.admin import admin_command
from shared.credits import service as credits


def register(subparsers) -> None:
    accounts = subparsers.add_parser("accounts", help="manage accounts").add_subparsers(
        dest="accounts_command", required=True
    )
    create = accounts.add_parser("create", help="create an account")
    create.add_argument("email")
    create.add_argument("--monthly-credits", type=int, default=None)
    create.add_argument("--topup-credits", type=int, default=0)
    create.add_argument("--per-minute", type=int, default=None)
    create.add_argument("--per-hour", type=int, default=None)
    create.add_argument("--per-day", type=int, default=None)
    create.set_defaults(func=admin_command(create_account))

    keys = subparsers.add_parser("keys", help="manage API keys").add_subparsers(
        dest="keys_command", required=True
    )
    key_create = keys.add_parser("create", help="create a key; prints it, alone, once")
    key_create.add_argument("email")
    key_create.add_argument("--name", required=True)
    key_create.set_defaults(func=admin_command(create_key))
    key_list = keys.add_parser("list", help="list an account's active keys")
    key_list.add_argument("email")
    key_list.set_defaults(func=admin_command(list_keys))
    key_delete = keys.add_parser("delete", help="revoke a key at once")
    key_delete.add_argument("email")
    key_delete.add_argument("key", metavar="KEY_PREFIX_OR_ID")
    key_delete.set_defaults(func=admin_command(delete_key))


def create_account(session, settings, args) -> int:
    for name in ("monthly_credits", "topup_credits", "per_minute", "per_hour", "per_day"):
        value = getattr(args, name)
        if value is not None and value < (0 if "credits" in name else 1):
            raise ValueError(f"--{name.replace('_', '-')} must be a positive number.")
    account = service.create_account(
        session, args.email, per_minute=args.per_minute, per_hour=args.per_hour, per_day=args.per_day
    )
    monthly = settings.default_monthly_credits if args.monthly_credits is None else args.monthly_credits
    credits.open_balance(session, account.id, monthly_allowance=monthly, topup=args.topup_credits)
    print(f"created account {account.email} (id {account.id})", file=sys.stderr)
    return 0


def create_key(session, settings, args) -> int:
    account = service.get_account(session, args.email)
    issued = service.create_key(session, account, args.name, settings.support_email)
    print(issued.value)
    print("This key is shown once; store it now.", file=sys.stderr)
    return 0


def list_keys(session, settings, args) -> int:
    account = service.get_account(session, args.email)
    for key in service.active_keys(session, account.id):
        last_used = key.last_used_at.isoformat(timespec="seconds") if key.last_used_at else "never"
        print(
            f"{key.id}\t{key.prefix}…\t{key.name}\tcreated {key.created_at.isoformat(timespec='seconds')}"
            f"\tlast used {last_used}"
        )
    return 0


def delete_key(session, settings, args) -> int:
    account = service.get_account(session, args.email)
    key = service.delete_key(session, account, args.key)
    print(f"deleted key {key.id} ({key.prefix}…, {key.name})", file=sys.stderr)
    return 0

