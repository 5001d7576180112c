"""What every operator command shares: settings, an up-to-date database, clear errors."""

from __future__ import annotations

import sys
from typing import Callable

from shared.accounts.errors import AccountError
from shared.credits.errors import CreditError
from shared.settings import ConfigurationError, Settings

OPERATOR_ERRORS = (AccountError, CreditError, ConfigurationError, ValueError)


def admin_command(action: Callable) -> Callable:
    """Wrap `action(session, settings, args)` as an argparse command function."""

    def run(args) -> int:
        from shared.db.migrate import open_database

        try:
            settings = Settings.from_environ()
            database = open_database(settings.database_url)
            try:
                with database.session() as session:
                    return action(session, settings, args)
            finally:
                database.dispose()
        except OPERATOR_ERRORS as exc:
            print(f"taxonomist: {exc}", file=sys.stderr)
            return 1

    return run
