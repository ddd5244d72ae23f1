"""The registry of conformance rules: each a named check with the contract section it is from.

A rule is an async function over the `World` that returns when the rule holds and raises
`RuleFailed` with one line of evidence when it does not. Registration order is run order:
the check modules are imported in the order of the contract's sections, and the envelope
rule, which judges every error answer the others saw, comes last.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from qa.conformance.world import World

Check = Callable[[World], Awaitable[None]]


@dataclass(frozen=True)
class Rule:
    """One rule: `id` (stable, used in reports), `section` of CONTRACT.md, what it means."""

    id: str
    section: str
    summary: str
    check: Check


RULES: list[Rule] = []


def rule(rule_id: str, section: str, summary: str) -> Callable[[Check], Check]:
    """Register the decorated check as a rule (ids are unique)."""

    def register(check: Check) -> Check:
        if any(r.id == rule_id for r in RULES):
            raise ValueError(f"duplicate rule id {rule_id}")
        RULES.append(Rule(rule_id, section, summary, check))
        return check

    return register
