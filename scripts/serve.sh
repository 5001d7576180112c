#!/usr/bin/env bash
# Set up if needed, then run the whole service on this machine (embedded mode by default).
source "$(dirname "$0")/setup.sh"
exec "$venv/bin/taxonomist" serve "$@"
