"""Running the rules: each in turn under its own bound and the run's total deadline, then
the cleanup of everything made, whatever the verdicts.

The server must answer before any rule runs: an unreachable server, one that does not
serve the API at that URL, or one that refuses either token, is a usage problem
(`Unreachable`, exit 2), not a list of failed rules. A rule the run's deadline cut off (or
never reached) is "not checked", not failed: the server is not blamed for the time the
caller allowed.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from qa.conformance import (
    checks_conventions,
    checks_delete,
    checks_envelope,
    checks_index,
    checks_ownership,
    checks_runs,
    checks_watch,
)
from qa.conformance.probe import Answer, Probe, RuleFailed, Unreachable, seg
from qa.conformance.rules import RULES, Rule
from qa.conformance.world import World

#: Run order: deletions come after the rules that read the fixtures they purge, and the
#: envelope rule, which judges every error answer seen, comes last.
ORDER = [
    m.__name__
    for m in (
        checks_conventions,
        checks_ownership,
        checks_index,
        checks_watch,
        checks_runs,
        checks_delete,
        checks_envelope,
    )
]


def ordered_rules() -> list[Rule]:
    """Every rule, in run order (registration order within a module)."""
    return sorted(RULES, key=lambda r: ORDER.index(r.check.__module__))


#: One rule's own bound (the watch rules hold requests for seconds).
RULE_SECONDS = 60.0
#: Kept back from the total deadline for the cleanup (a quarter of a short deadline).
CLEANUP_SECONDS = 20.0


@dataclass(frozen=True)
class Verdict:
    """One rule's outcome; `evidence` is empty when it passed. A rule not `checked` (the
    deadline came first) has neither passed nor failed: `evidence` says why."""

    rule: str
    section: str
    summary: str
    passed: bool
    evidence: str
    seconds: float
    checked: bool = True

    @property
    def failed(self) -> bool:
        return self.checked and not self.passed


@dataclass(frozen=True)
class Outcome:
    verdicts: list[Verdict]
    requests: int
    seconds: float
    left_behind: list[str]

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    @property
    def unchecked(self) -> int:
        """How many rules the deadline left unchecked."""
        return sum(not v.checked for v in self.verdicts)


async def run(
    server: str, a: str, b: str, *, deadline: float = 300.0, only: frozenset[str] = frozenset()
) -> Outcome:
    """Check `server` with tokens `a` and `b` (two different principals) against every
    rule (or those named in `only`)."""
    started = time.monotonic()
    probe = Probe.open(server, a, b, started + deadline)
    world = World(probe)
    verdicts: list[Verdict] = []
    reserve = min(CLEANUP_SECONDS, deadline / 4)
    try:
        try:
            await _preflight(world)
            for one in ordered_rules():
                if only and one.id not in only:
                    continue
                verdicts.append(await _judge(world, one, started + deadline - reserve))
        finally:  # what was made is deleted, also when the check could not go on
            probe.deadline = time.monotonic() + reserve
            left = await world.cleanup()
    finally:
        await probe.close()
    return Outcome(verdicts, probe.requests, time.monotonic() - started, left)


async def _preflight(world: World) -> None:
    """Both tokens are accepted by a server that answers at all, both may create sessions,
    and they are two principals (B cannot read A's new session)."""
    probe = world.probe
    if probe.a == probe.b:
        raise Unreachable("--token and --other-token must be two different principals' tokens")
    try:
        for name, token in (("A", probe.a), ("B", probe.b)):
            answer = await probe.call("GET", "/v1/sessions", token=token, params={"limit": "1"})
            _serves_the_api(answer)
            if answer.status != 200:
                raise Unreachable(f"token {name} is not accepted: {answer.what()}")
            made = await probe.call("POST", "/v1/sessions", token=token, body={})
            _serves_the_api(made)
            made_id = made.json().get("id") if isinstance(made.json(), dict) else None
            if made.status != 201 or not isinstance(made_id, str):
                raise Unreachable(f"token {name} cannot create sessions: {made.what()}")
            world.created.append((token, made_id))
        ours = world.created[0][1]
        theirs = await probe.call("GET", f"/v1/sessions/{seg(ours)}", token=probe.b)
    except RuleFailed as exc:
        raise Unreachable(f"the server does not answer: {exc.evidence}") from exc
    if theirs.status == 200:
        raise Unreachable(
            "token B reads token A's new session: the two tokens are one principal (or the "
            "server ignores ownership altogether)"
        )
    probe.errors.clear()


def _serves_the_api(answer: Answer) -> None:
    """Raise Unreachable when `answer` cannot come from the API (CONTRACT §1): an error
    without the error envelope (a wrong URL, a proxy's page, another service), or a
    success whose body is not a JSON object. Blaming a token for those would mislead."""
    if answer.status >= 400 and answer.code() is None:
        raise Unreachable(
            f"the server does not serve the Converge API at this URL ({answer.what()}, "
            "without the contract's error envelope): check --server"
        )
    if answer.status < 300 and not isinstance(answer.json(), dict):
        raise Unreachable(
            f"the server does not serve the Converge API at this URL ({answer.what()}, "
            "and its body is not a JSON object): check --server"
        )


async def _judge(world: World, one: Rule, end: float) -> Verdict:
    begun = time.monotonic()
    left = end - begun
    bound = min(RULE_SECONDS, left)
    evidence = ""
    checked = True
    if bound <= 0:
        evidence, checked = "not checked: the run's deadline (--deadline) passed first", False
    else:
        try:
            async with asyncio.timeout(bound):
                await one.check(world)
        except RuleFailed as exc:
            evidence = exc.evidence
        except TimeoutError:
            if left < RULE_SECONDS:  # the run's deadline cut it off, not the rule's bound
                evidence = "not checked: the run's deadline (--deadline) passed during it"
                checked = False
            else:
                evidence = f"no verdict within {bound:.0f} s"
    return Verdict(
        one.id,
        one.section,
        one.summary,
        not evidence,
        evidence,
        time.monotonic() - begun,
        checked,
    )
