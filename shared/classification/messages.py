"""The contract's message texts (section 7), word for word.

The front answers them as plain text; bulk results carry them as `error`.
"""

BAD_JSON = "Bad JSON format."
UNAUTHORIZED = "Cannot find account for this API key."
INSUFFICIENT_CREDITS = "Insufficient credits."
TOO_LARGE = "Request entity too large."
RATE_LIMITED = "Rate limit exceeded."
INTERNAL_ERROR = "An internal server error occurred. Please try again later."
