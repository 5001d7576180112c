"""`taxonomist credits ...`: operator commands for balances."""

from __future__ import annotations

import json
import sys

from shared.accounts.service import get_account
from shared.admin import admin_command
from shared.credits import service


def register(subparsers) -> None:
    credits = subparsers.add_parser("credits", help="manage credits").add_subparsers(
        dest="credits_command", required=True
    )
    topup = credits.add_parser("topup", help="grant top-up credits (they persist)")
    topup.add_argument("email")
    topup.add_argument("amount", type=int)
    topup.set_defaults(func=admin_command(top_up))
    show = credits.add_parser("show", help="show an account's balance")
    show.add_argument("email")
    show.add_argument("--json", action="store_true", help="one JSON line")
    show.set_defaults(func=admin_command(show_balance))


def top_up(session, settings, args) -> int:
    account = get_account(session, args.email)
    service.top_up(session, account.id, args.amount, note="granted by an operator")
    print(f"added {args.amount} top-up credits to {account.email}", file=sys.stderr)
    return 0


def show_balance(session, settings, args) -> int:
    balance = service.show(session, get_account(session, args.email).id)
    if args.json:
        print(json.dumps(balance.to_dict()))
    else:
        print(
            f"monthly {balance.monthly} of {balance.monthly_allowance} "
            f"(renews {balance.renews_at.date().isoformat()}), top-up {balance.topup}, "
            f"total {balance.total}"
        )
    return 0
