"""Accounts and keys on SQLite and PostgreSQL."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from shared.accounts import service as accounts
from shared.accounts.errors import AccountExists, InvalidApiKey, KeyLimitReached, KeyNotFound
from shared.accounts.keys import hash_key
from shared.accounts.models import ApiKey

SUPPORT = "help@example.test"


@pytest.fixture
def account(database):
    with database.session() as session:
        return accounts.create_account(session, "Owner@Example.test ")


def issue(database, account, name="k"):
    with database.session() as session:
        return accounts.create_key(session, account, name, SUPPORT)


def authenticate(database, value):
    with database.session() as session:
        return accounts.authenticate(session, f"Bearer {value}")


def test_emails_are_unique_ignoring_case(database, account):
    assert account.email == "owner@example.test"
    with pytest.raises(AccountExists), database.session() as session:
        accounts.create_account(session, "OWNER@example.test")


def test_a_key_is_long_random_prefixed_and_stored_only_as_a_hash(database, account):
    issued = issue(database, account)
    assert re.fullmatch(r"txn_[A-Za-z0-9_-]{43}", issued.value)
    assert issued.value != issue(database, account).value
    with database.session() as session:
        stored = session.scalar(select(ApiKey).where(ApiKey.id == issued.id))
        columns = [getattr(stored, column.key) for column in ApiKey.__table__.columns]
    assert issued.value not in [str(value) for value in columns]
    assert stored.key_hash == hash_key(issued.value)
    assert issued.value.startswith(stored.prefix) and len(stored.prefix) < 16


def test_authentication_finds_the_account(database, account):
    issued = issue(database, account)
    holder = authenticate(database, issued.value)
    assert (holder.account_id, holder.key_id) == (account.id, issued.id)


def test_the_fourth_active_key_is_refused_naming_support(database, account):
    for n in range(3):
        issue(database, account, f"key {n}")
    with pytest.raises(KeyLimitReached, match=re.escape(SUPPORT)):
        issue(database, account, "one too many")


def test_a_deleted_key_is_refused_and_frees_its_place(database, account):
    keys = [issue(database, account, f"key {n}") for n in range(3)]
    with database.session() as session:
        accounts.delete_key(session, account, keys[0].prefix)
    with pytest.raises(InvalidApiKey):
        authenticate(database, keys[0].value)
    assert authenticate(database, keys[1].value).key_id == keys[1].id
    assert issue(database, account, "replacement").value


def test_delete_by_id_and_unknown_key(database, account):
    issued = issue(database, account)
    with database.session() as session:
        assert accounts.delete_key(session, account, str(issued.id)).id == issued.id
    with pytest.raises(KeyNotFound), database.session() as session:
        accounts.delete_key(session, account, str(issued.id))


def test_another_accounts_key_cannot_be_deleted(database, account):
    issued = issue(database, account)
    with database.session() as session:
        other = accounts.create_account(session, "other@example.test")
    with pytest.raises(KeyNotFound), database.session() as session:
        accounts.delete_key(session, other, issued.prefix)
    assert authenticate(database, issued.value).account_id == account.id


def test_using_a_key_is_noted_at_most_once_a_minute(database, account):
    issued = issue(database, account)

    def last_used():
        with database.session() as session:
            return session.get(ApiKey, issued.id).last_used_at

    def touch():
        with database.session() as session:
            accounts.touch_key(session, accounts.authenticate(session, f"Bearer {issued.value}"))

    assert last_used() is None
    touch()
    first = last_used()
    assert first is not None
    touch()
    assert last_used() == first
