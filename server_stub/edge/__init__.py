"""The HTTP edge: the app, what a request must be to be admitted, and the contract's words
for every refusal (the error envelope, limits, rate limits, the Host check)."""
