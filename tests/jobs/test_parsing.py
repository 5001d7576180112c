"""Reading a job submission: strict CSV, per-item size, text a database can store."""

from __future__ import annotations

import json

import pytest

from shared.jobs.errors import InvalidJobInput
from shared.jobs.parsing import parse_job
from shared.validation import MAX_JSON_DEPTH

MAX_ITEMS = 100
MAX_ITEM_BYTES = 16 * 1024


def parse(body: str | bytes, content_type: str = "text/csv", query: dict | None = None):
    raw = body.encode() if isinstance(body, str) else body
    return parse_job(raw, content_type, query or {}, MAX_ITEMS, MAX_ITEM_BYTES)


def refusal(body: str | bytes, content_type: str = "text/csv", query: dict | None = None) -> str:
    with pytest.raises(InvalidJobInput) as caught:
        parse(body, content_type, query)
    return str(caught.value)


def test_an_unterminated_quote_is_refused_on_the_line_it_opens():
    message = refusal('id,product\n1,knife\n2,"fork\n3,spoon\n4,plate\n')
    assert "Line 3: A quoted cell is not closed" in message


def test_csv_cell_counts_are_named_as_such():
    message = refusal("id,product\n1,knife,extra\n2\n")
    assert "Line 2: The row has 3 cells; the header has 2." in message
    assert "Line 3: The row has 1 cells; the header has 2." in message
    assert "Bad JSON format." not in message and "must be a string" not in message


def test_a_cell_over_the_csv_field_limit_is_a_refusal_not_a_crash():
    message = refusal("id,product\n1," + "x" * 200_000 + "\n")
    assert "Line 2: A cell is longer than 131072 characters" in message


def test_an_item_over_the_synchronous_limit_is_refused_by_line():
    big = "knife " * (MAX_ITEM_BYTES // 6 + 1)
    jsonl = "\n".join(json.dumps({"id": str(n), "product": p}) for n, p in enumerate(["fork", big]))
    assert "Line 2: Request entity too large." in refusal(jsonl, "application/x-ndjson")
    assert "Line 3: Request entity too large." in refusal(f"id,product\n1,fork\n2,{big}\n")
    body = json.dumps({"items": [{"id": "a", "product": big}]})
    assert "Item 1: Request entity too large." in refusal(body, "application/json")


def test_an_item_at_the_limit_is_accepted():
    product = "k" * (MAX_ITEM_BYTES - len(json.dumps({"id": "1", "product": ""}, separators=(",", ":"))))
    job = parse(json.dumps({"id": "1", "product": product}), "application/x-ndjson")
    assert job.items[0].request.product == product


@pytest.mark.parametrize(
    "line, field",
    [
        ('{"id": "1", "product": "knife \\u0000"}', "'product'"),
        ('{"id": "1", "product": "knife \\ud800"}', "'product'"),
        ('{"id": "\\udfff", "product": "knife"}', "'id'"),
        ('{"id": "1", "product": "knife", "customInstructionsForAi": "\\u0000"}', "'customInstructionsForAi'"),
        ('{"id": "1", "product": "knife", "note": "\\ud800"}', "Extra fields"),
    ],
)
def test_text_that_cannot_be_stored_is_refused_naming_the_field(line, field):
    message = refusal(line, "application/x-ndjson")
    assert "Line 1:" in message and field in message and "without NUL" in message


def test_a_nul_in_a_csv_product_or_a_query_option_is_refused():
    assert "Line 2: Field 'product'" in refusal("id,product\n1,kni\x00fe\n")
    message = refusal("id,product\n1,knife\n", query={"customInstructionsForAi": "a\x00"})
    assert message.startswith("Job options: Field 'customInstructionsForAi'")


def test_deeply_nested_json_is_refused_before_parsing():
    deep = "[" * 5_000 + "]" * 5_000
    line = '{"id": "1", "product": "knife", "extra": ' + deep + "}"
    assert f"nested deeper than {MAX_JSON_DEPTH}" in refusal(line, "application/x-ndjson")
    body = '{"items": [' + deep + "]}"
    assert f"nested deeper than {MAX_JSON_DEPTH}" in refusal(body, "application/json")


def test_brackets_inside_strings_do_not_count_as_nesting():
    product = "[[[{{{" * 100 + '\\"' + "]]]" * 50
    job = parse('{"id": "1", "product": "' + product + '"}', "application/x-ndjson")
    assert job.items[0].request.product.startswith("[[[{{{")
