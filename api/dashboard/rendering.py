"""Rendering a page: the Jinja2 environment and what every template receives."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from api.dashboard import csrf
from api.dashboard.sessions import context_of

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"

# select_autoescape (Starlette's default) escapes every value in .html templates.
templates = Jinja2Templates(directory=TEMPLATES_DIR)


def render(
    request: Request,
    template: str,
    *,
    status_code: int = 200,
    headers: dict | None = None,
    **values,
) -> Response:
    context = {
        "csrf_token": csrf.token(request),
        "support_email": context_of(request).settings.support_email,
        **values,
    }
    return templates.TemplateResponse(
        request, template, context, status_code=status_code, headers=headers
    )
