"""What can go wrong when loading a taxonomy.

    TaxonomyError
    ├── UnknownTaxonomy        the name is neither "Google" nor "Shopify"
    ├── TaxonomyFileMissing    an expected file is not in TAXONOMY_DIR
    └── TaxonomyFileInvalid    a file is there but cannot be parsed
"""

from __future__ import annotations

from pathlib import Path


class TaxonomyError(Exception):
    """Base of every taxonomy loading error; the message says what to fix."""


class UnknownTaxonomy(TaxonomyError):
    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"Unknown taxonomy {name!r}; expected one of {', '.join(known)}.")
        self.name = name


class TaxonomyFileMissing(TaxonomyError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"Taxonomy file not found: {path}")
        self.path = path


class TaxonomyFileInvalid(TaxonomyError):
    def __init__(self, path: Path, reason: str, line_number: int | None = None) -> None:
        where = f"{path}:{line_number}" if line_number is not None else str(path)
        super().__init__(f"Cannot parse taxonomy file {where}: {reason}")
        self.path = path
        self.line_number = line_number
