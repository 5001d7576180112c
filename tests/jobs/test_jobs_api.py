"""Bulk jobs through HTTP with real workers, PostgreSQL and Redis."""

from __future__ import annotations

import csv
import io
import json

PRODUCTS = [
    "Stainless steel chef's knife 8 inch",
    "Men's leather hiking boots waterproof",
    "Organic green tea bags 100 count",
    "Wireless bluetooth over-ear headphones",
]


def csv_body(count: int, start: int = 0) -> str:
    rows = ["id,product,sku"] + [
        f"item-{n},{PRODUCTS[n % len(PRODUCTS)]},SKU{n}" for n in range(start, start + count)
    ]
    return "\n".join(rows) + "\n"


def jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_the_three_formats_classify_every_item_once_and_charge_one_credit_each(jobs_stack):
    customer = jobs_stack.customer(monthly=100)
    submissions = [
        (csv_body(6), "text/csv"),
        (jsonl({"id": f"j{n}", "product": PRODUCTS[n % 4]} for n in range(5)), "application/x-ndjson"),
        (
            {
                "items": [{"id": "a", "product": PRODUCTS[0]}, {"id": "b", "product": PRODUCTS[0], "taxonomy": "Shopify"}],
                "taxonomy": "Google",
                "leafsOnly": True,
            },
            "application/json",
        ),
    ]
    jobs = []
    for body, content_type in submissions:
        response = jobs_stack.submit(customer, body, content_type)
        assert response.status_code == 202, response.text
        assert response.json()["credits"]["held"] == response.json()["counts"]["total"]
        jobs.append(response.json()["id"])
    for job_id, total in zip(jobs, (6, 5, 2)):
        job = jobs_stack.wait(customer, job_id)
        assert job["status"] == "completed"
        assert job["counts"]["done"] == total
        assert job["counts"]["found"] + job["counts"]["notFound"] == total
        assert job["credits"] == {"held": total, "consumed": total, "refunded": 0}
    assert jobs_stack.balance(customer).total == 100 - 13

    rows = list(csv.DictReader(io.StringIO(jobs_stack.results(customer, jobs[0], "csv").text)))
    assert [row["id"] for row in rows] == [f"item-{n}" for n in range(6)]
    assert [row["sku"] for row in rows] == [f"SKU{n}" for n in range(6)]
    assert all(row["success"] == "true" for row in rows)
    # Identical products reuse one answer.
    assert rows[0]["categoryId"] == rows[4]["categoryId"]

    results = [json.loads(line) for line in jobs_stack.results(customer, jobs[2]).text.splitlines()]
    shopify = results[1]
    assert shopify["id"] == "b" and shopify["success"] is True
    assert set(shopify) >= {"categoryFound", "categoryId", "categoryPath", "categoryLine", "categoryTags", "confidenceLevel"}
    if shopify["categoryFound"]:
        assert not shopify["categoryId"].isdigit()  # a Shopify handle, not a Google id


def test_a_bad_submission_names_its_lines_and_charges_nothing(jobs_stack):
    customer = jobs_stack.customer(monthly=50)
    body = "id,product,taxonomy\n1,Red shoes,\n2,,\n3,Blue shirt,Amazon\n1,Green hat,\n"
    response = jobs_stack.submit(customer, body, "text/csv")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert "Line 3: Field 'product' must not be empty." in response.text
    assert "Line 4: Field 'taxonomy'" in response.text
    assert "Line 5: id '1' repeats Line 2." in response.text

    bad_json_line = jsonl([{"id": "x", "product": "Lamp"}]) + "{not json\n"
    response = jobs_stack.submit(customer, bad_json_line, "application/x-ndjson")
    assert response.status_code == 400 and "Line 2: Bad JSON format." in response.text

    too_many = jobs_stack.submit(customer, csv_body(51), "text/csv")
    assert too_many.status_code == 403 and too_many.text == "Insufficient credits."

    assert jobs_stack.submit(customer, "x", "text/plain").status_code == 400
    with jobs_stack.client() as client:
        assert client.get("/api/v1/jobs", headers=customer.headers).json()["jobs"] == []
        unauthenticated = client.post("/api/v1/jobs", content=csv_body(1), headers={"Content-Type": "text/csv"})
    assert unauthenticated.status_code == 401
    assert jobs_stack.balance(customer).total == 50


def test_a_retried_submission_with_the_same_idempotency_key_is_the_same_job(jobs_stack):
    customer = jobs_stack.customer(monthly=20)
    headers = {"Idempotency-Key": "import-2026-11-22"}
    first = jobs_stack.submit(customer, csv_body(4), "text/csv", headers=headers)
    second = jobs_stack.submit(customer, csv_body(4), "text/csv", headers=headers)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    jobs_stack.wait(customer, first.json()["id"])
    assert jobs_stack.balance(customer).total == 16
    with jobs_stack.client() as client:
        assert len(client.get("/api/v1/jobs", headers=customer.headers).json()["jobs"]) == 1


def test_cancel_refunds_the_items_not_started(jobs_stack):
    customer = jobs_stack.customer(monthly=3000)
    job_id = jobs_stack.submit(customer, csv_body(3000), "text/csv").json()["id"]
    with jobs_stack.client() as client:
        response = client.post(f"/api/v1/jobs/{job_id}/cancel", headers=customer.headers)
    assert response.status_code == 200
    assert response.json()["status"] in ("cancelling", "cancelled")
    job = jobs_stack.wait(customer, job_id)
    counts, credits = job["counts"], job["credits"]
    assert job["status"] == "cancelled"
    assert counts["cancelled"] > 0
    assert counts["done"] + counts["failed"] + counts["cancelled"] == 3000
    assert credits == {"held": 3000, "consumed": counts["done"], "refunded": counts["cancelled"] + counts["failed"]}
    assert jobs_stack.balance(customer).total == 3000 - counts["done"]
    results = [json.loads(line) for line in jobs_stack.results(customer, job_id).text.splitlines()]
    assert len(results) == 3000
    cancelled = [result for result in results if not result["success"]]
    assert len(cancelled) == counts["cancelled"] and all(result["error"] for result in cancelled)


def test_results_come_in_pages_and_as_whole_streams(jobs_stack):
    customer = jobs_stack.customer(monthly=300)
    job_id = jobs_stack.submit(customer, csv_body(250), "text/csv").json()["id"]
    jobs_stack.wait(customer, job_id)
    expected = [f"item-{n}" for n in range(250)]
    paged, cursor = [], None
    with jobs_stack.client() as client:
        while True:
            params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
            page = client.get(f"/api/v1/jobs/{job_id}/results", params=params, headers=customer.headers).json()
            paged += [result["id"] for result in page["results"]]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        by_accept = client.get(
            f"/api/v1/jobs/{job_id}/results", headers={**customer.headers, "Accept": "application/x-ndjson"}
        )
        csv_text = client.get(f"/api/v1/jobs/{job_id}/results", params={"format": "csv"}, headers=customer.headers)
        bad_limit = client.get(f"/api/v1/jobs/{job_id}/results", params={"limit": 0}, headers=customer.headers)
    assert paged == expected
    assert by_accept.headers["content-type"].startswith("application/x-ndjson")
    assert [json.loads(line)["id"] for line in by_accept.text.splitlines()] == expected
    assert csv_text.headers["content-type"].startswith("text/csv")
    assert [row["id"] for row in csv.DictReader(io.StringIO(csv_text.text))] == expected
    assert bad_limit.status_code == 400


def test_jobs_are_listed_newest_first_and_another_accounts_job_is_404(jobs_stack):
    owner, stranger = jobs_stack.customer(monthly=10), jobs_stack.customer(monthly=10)
    ids = [jobs_stack.submit(owner, csv_body(1, start=n), "text/csv").json()["id"] for n in range(3)]
    with jobs_stack.client() as client:
        first = client.get("/api/v1/jobs", params={"limit": 2}, headers=owner.headers).json()
        rest = client.get(
            "/api/v1/jobs", params={"limit": 2, "cursor": first["nextCursor"]}, headers=owner.headers
        ).json()
        assert [job["id"] for job in first["jobs"] + rest["jobs"]] == ids[::-1]
        assert rest["nextCursor"] is None
        for method, path in [
            ("GET", f"/api/v1/jobs/{ids[0]}"),
            ("GET", f"/api/v1/jobs/{ids[0]}/results"),
            ("POST", f"/api/v1/jobs/{ids[0]}/cancel"),
        ]:
            response = client.request(method, path, headers=stranger.headers)
            assert response.status_code == 404, path
            assert response.headers["content-type"].startswith("text/plain")
        assert client.get("/api/v1/jobs", headers=stranger.headers).json()["jobs"] == []


def test_a_small_job_is_not_starved_by_a_large_one_before_it(jobs_stack):
    large_owner, small_owner = jobs_stack.customer(monthly=3000), jobs_stack.customer(monthly=30)
    large = jobs_stack.submit(large_owner, csv_body(3000), "text/csv").json()["id"]
    jobs_stack.wait(large_owner, large, until=lambda job: job["counts"]["done"] > 0)
    small = jobs_stack.submit(small_owner, csv_body(30), "text/csv").json()["id"]
    assert jobs_stack.wait(small_owner, small)["status"] == "completed"
    large_job = jobs_stack.job(large_owner, large)
    assert large_job["status"] == "running"
    assert large_job["counts"]["done"] < 3000 / 2
    jobs_stack.wait(large_owner, large)
