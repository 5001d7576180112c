import json

import pytest

from api.errors import BAD_JSON
from shared.classification.validation import parse_classification_request
from shared.classification.models import ClassificationRequest
from shared.validation import InvalidRequest, bounded_int


def parse(value) -> ClassificationRequest:
    return parse_classification_request(json.dumps(value).encode())


def rejection(body: bytes) -> str:
    with pytest.raises(InvalidRequest) as caught:
        parse_classification_request(body)
    return str(caught.value)


def test_only_product_equals_all_defaults():
    assert parse({"product": "mug"}) == parse(
        {
            "product": "mug",
            "taxonomy": "Google",
            "customInstructionsForAi": None,
            "leafsOnly": False,
            "fallbackToBestGuess": False,
        }
    )


def test_every_field_is_read():
    request = parse(
        {
            "product": "mug",
            "taxonomy": "Shopify",
            "customInstructionsForAi": "prefer kitchen",
            "leafsOnly": True,
            "fallbackToBestGuess": True,
            "somethingElse": [1, 2],
        }
    )
    assert request == ClassificationRequest("mug", "Shopify", "prefer kitchen", True, True)


@pytest.mark.parametrize(
    "body", [b"{", b"", b"not json", b"\xff\xfe", b'{"product": "a",}', b"{'product': 'a'}"]
)
def test_malformed_json_is_exactly_bad_json_format(body):
    assert rejection(body) == BAD_JSON


@pytest.mark.parametrize("body", [b"[]", b'"product"', b"42", b"null", b'[{"product": "a"}]'])
def test_body_must_be_an_object(body):
    assert rejection(body) == "The request body must be a JSON object."


@pytest.mark.parametrize(
    "value, message",
    [
        ({}, "Field 'product' is required."),
        ({"product": None}, "Field 'product' must be a string."),
        ({"product": 12}, "Field 'product' must be a string."),
        ({"product": ["a"]}, "Field 'product' must be a string."),
        ({"product": ""}, "Field 'product' must not be empty."),
        ({"product": " \n\t "}, "Field 'product' must not be empty."),
    ],
)
def test_product_rules(value, message):
    assert rejection(json.dumps(value).encode()) == message


@pytest.mark.parametrize("taxonomy", ["google", "GOOGLE", "shopify", "Amazon", "", None, 1, ["Google"]])
def test_taxonomy_is_exactly_google_or_shopify(taxonomy):
    message = rejection(json.dumps({"product": "a", "taxonomy": taxonomy}).encode())
    assert message == "Field 'taxonomy' must be \"Google\" or \"Shopify\"."


@pytest.mark.parametrize("field", ["leafsOnly", "fallbackToBestGuess"])
@pytest.mark.parametrize("value", ["true", "false", 1, 0, None, [], {}])
def test_flags_are_json_booleans_only(field, value):
    message = rejection(json.dumps({"product": "a", field: value}).encode())
    assert message == f"Field '{field}' must be a boolean (true or false)."


@pytest.mark.parametrize("value", [1, True, ["x"], {"a": 1}])
def test_custom_instructions_are_a_string_or_null(value):
    message = rejection(json.dumps({"product": "a", "customInstructionsForAi": value}).encode())
    assert message == "Field 'customInstructionsForAi' must be a string or null."


@pytest.mark.parametrize("depth", [100, 1_000, 8_000])
def test_deep_nesting_is_refused_before_the_parser_recurses(depth):
    body = b'{"product": "knife", "x": ' + b"[" * depth + b"]" * depth + b"}"
    assert "nested deeper than" in rejection(body)


@pytest.mark.parametrize(
    "body, field",
    [
        (rb'{"product": "knife \ud800"}', "Field 'product'"),
        (rb'{"product": "knife \u0000"}', "Field 'product'"),
        (rb'{"product": "knife", "customInstructionsForAi": "\udfff"}', "Field 'customInstructionsForAi'"),
    ],
)
def test_text_with_a_lone_surrogate_or_a_nul_is_refused_naming_the_field(body, field):
    assert rejection(body) == f"{field} must be valid Unicode text without NUL characters."


def test_a_utf16_body_is_still_read():
    assert parse_classification_request('{"product": "mug"}'.encode("utf-16")).product == "mug"


@pytest.mark.parametrize("value", ["\u00b2", "99999999999999999999999", "-1", "", "0", "1001", " 5"])
def test_bounded_numbers_refuse_anything_but_plain_digits_in_range(value):
    with pytest.raises(InvalidRequest) as caught:
        bounded_int("Query parameter 'limit'", value, 1, 1000)
    assert str(caught.value) == "Query parameter 'limit' must be a number from 1 to 1000."
