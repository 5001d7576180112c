#!/usr/bin/env bash
# Set up if needed, then run the whole test suite.
# Needs PostgreSQL and Redis on 127.0.0.1 (see README), and /usr/bin/chromium for the browser tests.
source "$(dirname "$0")/setup.sh"
cd "$repo_root"
"$venv/bin/pip" install --quiet --no-deps -r tests/requirements-model.txt
exec "$venv/bin/python" -m pytest "$@"
