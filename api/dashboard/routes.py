"""The /dashboard mount: its pages, its static files, its headers and session middleware."""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from api.dashboard import account, billing, jobs, keys, overview, playground
from api.dashboard.headers import SecurityHeadersMiddleware
from api.dashboard.rendering import STATIC_DIR
from api.dashboard.sessions import session_middleware
from shared.settings import Settings


def dashboard_mount(settings: Settings) -> Mount:
    return Mount(
        "/dashboard",
        routes=[
            Route("/", overview.home),
            Route("/signup", account.signup_page),
            Route("/signup", account.signup, methods=["POST"]),
            Route("/signin", account.signin_page),
            Route("/signin", account.signin, methods=["POST"]),
            Route("/signout", account.signout, methods=["POST"]),
            Route("/keys", keys.keys_page),
            Route("/keys", keys.create_key, methods=["POST"]),
            Route("/keys/{key_id:int}/delete", keys.confirm_delete_page),
            Route("/keys/{key_id:int}/delete", keys.delete_key, methods=["POST"]),
            Route("/playground", playground.playground_page),
            Route("/playground", playground.run, methods=["POST"]),
            Route("/jobs", jobs.jobs_page),
            Route("/jobs", jobs.submit, methods=["POST"]),
            Route("/jobs/{job_id}/cancel", jobs.cancel, methods=["POST"]),
            Route("/jobs/{job_id}/results.{format}", jobs.download),
            Route("/billing", billing.billing_page),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        middleware=[Middleware(SecurityHeadersMiddleware), session_middleware(settings)],
    )
