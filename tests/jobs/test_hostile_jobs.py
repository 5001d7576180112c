"""Hostile bulk input and query values on PostgreSQL: 400 naming the line, nothing held."""

from __future__ import annotations

import base64
import json

import pytest

from tests.dashboard.test_forms import csrf_token, signed_up

BIG_PRODUCT = "knife " * 3_000  # over MAX_BODY_BYTES (16 KiB) as one item

SUBMISSIONS = {
    "NUL in a CSV product": ("id,product\n1,fork\n2,kni\x00fe\n", "text/csv", "Line 3: Field 'product'"),
    "NUL in a JSONL product": (
        '{"id": "1", "product": "kni\\u0000fe"}\n', "application/x-ndjson", "Line 1: Field 'product'"
    ),
    "surrogate in a JSONL id": (
        '{"id": "\\ud800", "product": "knife"}\n', "application/x-ndjson", "Line 1: Field 'id'"
    ),
    "CSV cell over the field limit": (
        "id,product\n1," + "x" * 140_000 + "\n", "text/csv", "Line 2: A cell is longer than"
    ),
    "unterminated CSV quote": (
        'id,product\n1,"knife\n2,fork\n3,spoon\n', "text/csv", "Line 2: A quoted cell is not closed"
    ),
    "item over the synchronous limit": (
        json.dumps({"id": "1", "product": BIG_PRODUCT}) + "\n",
        "application/x-ndjson",
        "Line 1: Request entity too large.",
    ),
}


@pytest.mark.parametrize("name", SUBMISSIONS)
def test_hostile_submissions_are_refused_by_line_and_hold_nothing(jobs_stack, name):
    body, content_type, expected = SUBMISSIONS[name]
    customer = jobs_stack.customer(monthly=10)
    response = jobs_stack.submit(customer, body.encode("utf-8", "surrogatepass"), content_type)
    assert response.status_code == 400, response.text
    assert expected in response.text
    assert jobs_stack.balance(customer).total == 10


def test_bad_query_values_and_path_ids_are_400s(jobs_stack):
    customer = jobs_stack.customer(monthly=10)
    job_id = jobs_stack.submit(customer, "id,product\n1,fork\n", "text/csv").json()["id"]
    naive_cursor = base64.urlsafe_b64encode(f"2026-01-01T00:00:00|{job_id}".encode()).decode()
    nul_cursor = base64.urlsafe_b64encode(b"2026-01-01T00:00:00+00:00|job_\x00").decode()
    with jobs_stack.client() as client:
        for path, named in [
            (f"/api/v1/jobs/{job_id}/results?cursor=99999999999999999999999", "'cursor'"),
            (f"/api/v1/jobs/{job_id}/results?limit=%C2%B2", "'limit'"),
            ("/api/v1/jobs?limit=%C2%B2", "'limit'"),
            ("/api/v1/jobs/%00", "job"),
            ("/api/v1/jobs/%00/results", "job"),
            (f"/api/v1/jobs?cursor={naive_cursor}", "'cursor'"),
            (f"/api/v1/jobs?cursor={nul_cursor}", "'cursor'"),
        ]:
            response = client.get(path, headers=customer.headers)
            assert response.status_code == 400, (path, response.text)
            assert named in response.text, path
        cancel = client.post("/api/v1/jobs/job_%00/cancel", headers=customer.headers)
        assert cancel.status_code == 400


def test_dashboard_job_and_key_paths_out_of_range_are_404s(jobs_stack):
    with signed_up(jobs_stack) as client:
        token = csrf_token(client, "/dashboard/keys")
        assert client.get("/dashboard/jobs/%00/results.csv").status_code == 404
        deleted = client.post("/dashboard/keys/99999999999999999999/delete", data={"csrf_token": token})
        assert deleted.status_code == 404
        upload = client.post(
            "/dashboard/jobs",
            data={"csrf_token": token, "taxonomy": "Google"},
            files={"file": ("items.csv", b"id,product\n1,kni\x00fe\n", "text/csv")},
        )
        assert upload.status_code == 400 and "Line 2: Field" in upload.text
