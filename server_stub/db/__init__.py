"""Persistence: typed models of the ADR-0050 §5 graph and the engine factory."""
