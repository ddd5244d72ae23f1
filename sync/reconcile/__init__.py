"""Converging with the server's index (CONTRACT §7, ADR-0050 §8): the walk, the pure
planner, the content phase, and the triggers (timer, watch) that start a pass."""
