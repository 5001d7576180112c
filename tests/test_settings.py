"""Settings: read from the environment by their declaration, refused by name, documented in the README."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shared.settings import ConfigurationError, Settings, declared_settings, markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"
TABLE_HEADER = "| Variable | Default | Meaning |"


def readme_table() -> str:
    text = README.read_text()
    start = text.index(TABLE_HEADER)
    return text[start : text.index("\n\n", start) + 1]


def test_the_readme_lists_exactly_the_declared_settings_with_their_defaults():
    assert readme_table() == markdown_table()


def test_the_markdown_command_prints_the_table():
    printed = subprocess.run(
        [sys.executable, "-m", "shared.settings", "--markdown"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert printed == markdown_table()
    assert "| `CLASSIFY_TIMEOUT_SECONDS` | `30` |" in printed


def test_every_variable_is_declared_once():
    names = [declared.env for _, declared in declared_settings()]
    assert len(names) == len(set(names))


def test_an_empty_environment_gives_the_declared_defaults():
    assert Settings.from_environ({}) == Settings()


def test_each_variable_reaches_its_field_with_its_type():
    settings = Settings.from_environ(
        {
            "CLASSIFY_TIMEOUT_SECONDS": "45",
            "JOB_CHUNK_SIZE": "20",
            "TAXONOMY_DIR": "/srv/taxonomies",
            "LOCAL_CONFIDENCE_THRESHOLD": "0.3",
            "SIGNUP_LIMITS_PER_ADDRESS": "1/2/3",
            "OPENAI_API_KEY": "sk-not-to-print",
        }
    )
    assert settings.classify_timeout_seconds == 45.0
    assert settings.job_chunk_size == 20
    assert settings.taxonomy_dir == Path("/srv/taxonomies")
    assert settings.local_confidence_threshold == 0.3
    assert settings.signup_limits_per_address == (1, 2, 3)
    assert str(settings.openai_api_key) == "sk-not-to-print"
    assert "sk-not-to-print" not in repr(settings)


def test_an_empty_variable_counts_as_unset():
    assert Settings.from_environ({"OPENAI_BASE_URL": "", "JOB_CHUNK_SIZE": ""}) == Settings()


def test_the_cache_falls_back_to_the_xdg_cache_home():
    assert Settings.from_environ({"XDG_CACHE_HOME": "/xdg"}).cache_dir == Path("/xdg/taxonomist")
    assert Settings.from_environ(
        {"XDG_CACHE_HOME": "/xdg", "TAXONOMIST_CACHE_DIR": "/mine"}
    ).cache_dir == Path("/mine")


@pytest.mark.parametrize(
    "variable, text",
    [
        ("MAX_BODY_BYTES", "0"),
        ("MAX_BODY_BYTES", "16 KiB"),
        ("JOB_CHUNK_SIZE", "-1"),
        ("CLASSIFY_TIMEOUT_SECONDS", "soon"),
        ("AI_PROVIDER", "anthropic"),
        ("SIGNIN_LIMITS_PER_ADDRESS", "5/20"),
    ],
)
def test_an_invalid_value_is_refused_naming_its_variable(variable, text):
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_environ({variable: text})


def test_the_ai_budget_must_fit_the_synchronous_deadline():
    with pytest.raises(ConfigurationError, match="CLASSIFY_TIMEOUT_SECONDS"):
        Settings.from_environ(
            {"AI_PROVIDER": "openai", "AI_TOTAL_SECONDS": "29", "CLASSIFY_TIMEOUT_SECONDS": "30"}
        )
    fitting = Settings.from_environ(
        {"AI_PROVIDER": "openai", "AI_TOTAL_SECONDS": "28", "CLASSIFY_TIMEOUT_SECONDS": "30"}
    )
    assert fitting.ai_total_seconds == 28.0


def test_settings_are_an_immutable_value():
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.job_chunk_size = 1  # type: ignore[misc]
    assert settings.with_overrides(job_chunk_size=1).job_chunk_size == 1
    assert settings.job_chunk_size == Settings.job_chunk_size
