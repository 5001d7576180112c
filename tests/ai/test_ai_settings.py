"""The upstream AI's settings are checked when they are read."""

from __future__ import annotations

import pytest

from shared.settings import ConfigurationError, Settings

OPENAI = {"AI_PROVIDER": "openai"}


def test_the_defaults_hold_two_full_attempts_within_the_synchronous_deadline():
    settings = Settings.from_environ(OPENAI)
    assert 2 * settings.ai_timeout_seconds < settings.ai_total_seconds
    assert settings.ai_total_seconds < settings.classify_timeout_seconds


def test_a_slow_server_is_served_by_raising_the_three_together():
    settings = Settings.from_environ(
        {
            **OPENAI,
            "AI_TIMEOUT_SECONDS": "40",
            "AI_TOTAL_SECONDS": "85",
            "AI_ATTEMPTS": "2",
            "CLASSIFY_TIMEOUT_SECONDS": "90",
        }
    )
    assert (settings.ai_timeout_seconds, settings.ai_total_seconds, settings.ai_attempts) == (
        40.0, 85.0, 2
    )


@pytest.mark.parametrize(
    "environ, named",
    [
        ({"AI_TOTAL_SECONDS": "29"}, "CLASSIFY_TIMEOUT_SECONDS"),
        ({"AI_TIMEOUT_SECONDS": "26"}, "AI_TOTAL_SECONDS"),
        ({"AI_ATTEMPTS": "0"}, "AI_ATTEMPTS"),
        ({"AI_PRODUCT_TOKENS": "0"}, "AI_PRODUCT_TOKENS"),
        ({"AI_MAX_CONCURRENCY": "-1"}, "AI_MAX_CONCURRENCY"),
        ({"AI_MAX_CONCURRENCY": "1.5"}, "AI_MAX_CONCURRENCY"),
        ({"AI_MAX_CONCURRENCY": "four"}, "AI_MAX_CONCURRENCY"),
    ],
)
def test_a_budget_that_does_not_fit_is_refused_by_name(environ, named):
    with pytest.raises(ConfigurationError, match=named):
        Settings.from_environ({**OPENAI, **environ})


def test_the_local_selector_does_not_care():
    settings = Settings.from_environ({"CLASSIFY_TIMEOUT_SECONDS": "2"})
    assert settings.classify_timeout_seconds == 2.0


def test_calls_in_flight_are_uncapped_unless_asked():
    assert Settings.from_environ(OPENAI).ai_max_concurrency == 0
    assert Settings.from_environ({**OPENAI, "AI_MAX_CONCURRENCY": "4"}).ai_max_concurrency == 4
