"""Choosing the selector the settings ask for."""

from __future__ import annotations

from shared.ai.models import CallSlots, Selector
from shared.settings import Settings


def build_selector(settings: Settings, call_slots: CallSlots | None = None) -> Selector:
    """`call_slots`: the AI_MAX_CONCURRENCY cap for the openai selector
    (shared.ratelimit.concurrency.make_call_slots); None sends calls uncapped."""
    if settings.ai_provider == "openai":
        from shared.ai.openai_selector import OpenAISelector

        return OpenAISelector.from_settings(settings, call_slots=call_slots)
    from shared.ai.local import LocalSelector

    return LocalSelector(settings.local_confidence_threshold)
