"""The headless commands of CONTRACT §8 (`converge sync | ls | delete | watch | show | …`)."""
