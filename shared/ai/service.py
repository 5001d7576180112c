"""Choosing the selector the settings ask for."""

from __future__ import annotations

from shared.ai.models import Selector
from shared.settings import Settings


def build_selector(settings: Settings) -> Selector:
    if settings.ai_provider == "openai":
        from shared.ai.openai_selector import OpenAISelector

        return OpenAISelector.from_settings(settings)
    from shared.ai.local import LocalSelector

    return LocalSelector(settings.local_confidence_threshold)
