# Sourced by serve.sh and test.sh: a virtual environment with the project installed.
# TAXONOMY_DIR defaults to the reference folder beside the repository.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$repo_root/.venv}"
if [ ! -x "$venv/bin/taxonomist" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet -e "$repo_root[dev]"
fi
export TAXONOMY_DIR="${TAXONOMY_DIR:-$repo_root/../shared/taxonomies}"
