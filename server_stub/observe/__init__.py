"""What the server says about itself: request ids, the access log, latency, Prometheus
metrics, and rate-limited warnings."""
