"""Built indexes on disk, keyed by the content of every file they were built from.

A changed taxonomy file, or a change of index format, gives a new key; stale
entries are simply never read again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Mapping

import numpy as np

CHUNK_BYTES = 1 << 20


def content_key(paths: list[Path], format_version: str) -> str:
    digest = hashlib.sha256(format_version.encode())
    for path in paths:
        digest.update(path.name.encode())
        with path.open("rb") as data:
            while chunk := data.read(CHUNK_BYTES):
                digest.update(chunk)
    return digest.hexdigest()


def read(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays cached at `path`, or None when there is no readable entry."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError):
        return None


def write(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write atomically, so concurrent workers never read half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            # numpy's stub reads ** as its allow_pickle flag.
            np.savez(out, **arrays)  # type: ignore[arg-type]
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
