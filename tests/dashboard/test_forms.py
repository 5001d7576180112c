"""The dashboard's forms over plain HTTP: CSRF, sessions, escaping, refusals."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

import httpx

from api.dashboard.account import SIGN_IN_LIMITS
from shared.accounts import service as accounts
from shared.accounts.passwords import hash_password
from shared.credits import service as credits
from shared.db.session import Database
from tests.conftest import Stack
from tests.dashboard.browser import PASSWORD, new_email

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client: httpx.Client, path: str) -> str:
    return CSRF_FIELD.search(client.get(path).text).group(1)


def sign_up(client: httpx.Client, email: str, password: str = PASSWORD) -> httpx.Response:
    token = csrf_token(client, "/dashboard/signup")
    return client.post(
        "/dashboard/signup", data={"csrf_token": token, "email": email, "password": password}
    )


def sign_in(client: httpx.Client, email: str, password: str = PASSWORD) -> httpx.Response:
    token = csrf_token(client, "/dashboard/signin")
    return client.post(
        "/dashboard/signin", data={"csrf_token": token, "email": email, "password": password}
    )


@contextmanager
def signed_up(stack: Stack) -> Iterator[httpx.Client]:
    with stack.client() as client:
        email = new_email()
        assert sign_up(client, email).headers["location"] == "/dashboard/signin?signed-up"
        assert sign_in(client, email).status_code == 303
        yield client


def account_without_credits(stack: Stack) -> str:
    database = Database(stack.database_url)
    try:
        with database.session() as session:
            email = new_email()
            account = accounts.create_account(session, email, password_hash=hash_password(PASSWORD))
            credits.open_balance(session, account.id, monthly_allowance=0)
        return email
    finally:
        database.dispose()


def test_signed_out_visitors_see_the_sign_in_page(embedded: Stack):
    with embedded.client() as client:
        assert "<h1>Sign in</h1>" in client.get("/dashboard/").text
        response = client.get("/dashboard/keys")
        assert (response.status_code, response.headers["location"]) == (303, "/dashboard/signin")


def test_a_form_without_this_sessions_token_is_refused(embedded: Stack):
    with signed_up(embedded) as client, embedded.client() as stranger:
        stranger_token = csrf_token(stranger, "/dashboard/signin")
        for data in ({"name": "forged"}, {"name": "forged", "csrf_token": stranger_token}):
            assert client.post("/dashboard/keys", data=data).status_code == 403
        assert "forged" not in client.get("/dashboard/keys").text


def test_sign_up_answers_the_same_for_a_taken_email_and_refuses_a_short_password(embedded: Stack):
    email = account_without_credits(embedded)
    with embedded.client() as client:
        taken = sign_up(client, email, "another password")
        new = sign_up(client, new_email())
        short = sign_up(client, new_email(), "short")
        # The owner's password still works; the sign-up changed nothing.
        assert sign_in(client, email).status_code == 303
    assert (taken.status_code, taken.headers["location"]) == (new.status_code, new.headers["location"])
    assert "set-cookie" not in taken.headers and "set-cookie" not in new.headers
    assert short.status_code == 400 and "at least 8 characters" in short.text


def test_user_text_is_escaped_everywhere_it_is_shown(embedded: Stack):
    hostile = '<script>alert("x")</script>'
    with signed_up(embedded) as client:
        token = csrf_token(client, "/dashboard/keys")
        created = client.post("/dashboard/keys", data={"csrf_token": token, "name": hostile})
        ran = client.post(
            "/dashboard/playground",
            data={"csrf_token": token, "product": f"{hostile} wool scarf", "taxonomy": "Google"},
        )
    for page in (created, ran):
        assert page.status_code == 200
        assert hostile not in page.text and "&lt;script&gt;" in page.text
    assert created.headers["cache-control"] == "no-store"


def test_the_playground_refuses_without_credits_and_keeps_the_form(embedded: Stack):
    email = account_without_credits(embedded)
    with embedded.client() as client:
        token = csrf_token(client, "/dashboard/signin")
        client.post("/dashboard/signin", data={"csrf_token": token, "email": email, "password": PASSWORD})
        token = csrf_token(client, "/dashboard/playground")
        page = client.post(
            "/dashboard/playground",
            data={"csrf_token": token, "product": "Blue denim jacket", "taxonomy": "Shopify"},
        )
    assert "Insufficient credits." in page.text and "Blue denim jacket" in page.text
    assert 'value="Shopify" selected' in page.text


def test_the_playground_applies_the_apis_validation(embedded: Stack):
    with signed_up(embedded) as client:
        token = csrf_token(client, "/dashboard/playground")
        page = client.post(
            "/dashboard/playground",
            data={"csrf_token": token, "product": "Blue denim jacket", "taxonomy": "Amazon"},
        )
    assert page.status_code == 400 and "Field &#39;taxonomy&#39; must be" in page.text


def test_password_guessing_is_slowed_per_email(embedded: Stack):
    email = account_without_credits(embedded)
    with embedded.client() as client:
        token = csrf_token(client, "/dashboard/signin")

        def attempt(password: str) -> httpx.Response:
            return client.post(
                "/dashboard/signin", data={"csrf_token": token, "email": email, "password": password}
            )

        wrong = [attempt(f"wrong password {n}").status_code for n in range(SIGN_IN_LIMITS.per_minute)]
        refused = attempt(PASSWORD)
    assert wrong == [400] * SIGN_IN_LIMITS.per_minute
    # Even the right password waits: the limit does not tell a guesser when it hit.
    assert refused.status_code == 429 and "Too many sign-in attempts" in refused.text
    with embedded.client() as other:
        token = csrf_token(other, "/dashboard/signin")
        response = other.post(
            "/dashboard/signin", data={"csrf_token": token, "email": new_email(), "password": PASSWORD}
        )
    assert response.status_code == 400
