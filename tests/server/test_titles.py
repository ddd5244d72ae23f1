"""The title rule, case by case (CONTRACT §2)."""

from __future__ import annotations

import unicodedata

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from server_stub.domain.titles import normalize_text, normalize_title, title_from_message
from tests.conftest import LiveServer
from tests.server.conftest import message, new_session, start_run


def _msg(*texts: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello world", "Hello world"),
        ("  padded  ", "padded"),
        ("tabs\tand\nnewlines\r\n here", "tabs and newlines here"),
        # NFC: e + combining acute composes to é (one code point).
        ("Cafe\u0301", "Caf\u00e9"),
        # Cc characters that are not White_Space vanish without leaving a space.
        ("a\u0000b\u0007c\u001bd", "abcd"),
        # U+001C..U+001F are Cc but not Unicode White_Space (Python's isspace() disagrees).
        ("x\u001cy\u001dz\u001e!\u001f?", "xyz!?"),
        # U+0085 (NEL) is Cc *and* White_Space: it becomes a space.
        ("one\u0085two", "one two"),
        # Other White_Space: no-break space, ideographic space, line separator, em space.
        ("a\u00a0b\u3000c\u2028d\u2003e", "a b c d e"),
        # Zero-width space is not White_Space (category Cf): it stays.
        ("a\u200bb", "a\u200bb"),
    ],
)
def test_normalisation_steps(raw: str, expected: str) -> None:
    assert normalize_title(raw) == expected


def test_title_is_cut_to_64_code_points_and_trailing_space_stripped() -> None:
    text = "word " * 20
    title = normalize_title(text)
    assert title is not None
    assert len(title) <= 64
    assert title == ("word " * 13).rstrip()  # 65 chars -> cut at 64 -> "word ... word" stripped


def test_exactly_64_code_points_is_kept_whole() -> None:
    text = "x" * 64
    assert normalize_title(text) == text


def test_zwj_emoji_sequence_on_the_boundary_is_dropped_whole() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 7 code points
    text = "a" * 60 + family  # the cluster spans code points 61..67
    assert normalize_title(text) == "a" * 60


def test_flag_on_the_boundary_is_not_split() -> None:
    flag = "\U0001f1eb\U0001f1f7"  # regional indicators F + R, one cluster of 2 code points
    assert normalize_title("b" * 63 + flag) == "b" * 63
    assert normalize_title("b" * 62 + flag + "tail") == "b" * 62 + flag


def test_combining_sequence_is_not_split() -> None:
    # q + two combining marks has no precomposed form: a 3-code-point cluster.
    cluster = "q\u0307\u0323"
    text = "c" * 62 + cluster
    assert normalize_title(text) == "c" * 62


def test_cut_that_leaves_nothing_gives_null() -> None:
    # A single grapheme cluster longer than 64 code points.
    assert normalize_title("a" + "\u0301" * 80) is None


def test_first_non_empty_text_block_wins() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "image", "media_type": "image/png", "data": "AAAA"},
            {"type": "text", "text": " \u0000\t "},
            {"type": "text", "text": "Second block"},
            {"type": "text", "text": "Third"},
        ],
    }
    assert title_from_message(message) == "Second block"


def test_no_text_block_gives_null() -> None:
    assert title_from_message({"role": "user", "content": []}) is None
    assert title_from_message(_msg("   ", "\u0007")) is None


@pytest.mark.parametrize("bad", [None, "text", 3, {"content": "str"}, {"content": [1, None]}])
def test_malformed_legacy_data_gives_null_not_an_error(bad: object) -> None:
    assert title_from_message(bad) is None


def test_normalize_text_keeps_inner_single_spaces() -> None:
    assert normalize_text("a  b   c") == "a b c"


def test_a_text_block_that_is_not_a_string_is_skipped_and_the_next_one_gives_the_title() -> None:
    message = {
        "role": "user",
        "content": [{"type": "text", "text": 7}, {"type": "text", "text": "Real title"}],
    }
    assert title_from_message(message) == "Real title"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("X" * 100, "X" * 64),  # a cut inside a word keeps its letters, whatever they are
        ("Xmas list X", "Xmas list X"),  # only spaces are stripped at the ends
        ("a" * 63 + " tail", "a" * 63),  # the cut lands after a space: the space goes
        ("a" * 63 + "\u3000\t" + "b" * 10, "a" * 63),  # White_Space is one space, then stripped
    ],
)
def test_the_cut_strips_spaces_and_nothing_else(raw: str, expected: str) -> None:
    assert normalize_title(raw) == expected


_GRAPHEME = regex.compile(r"\X")

#: Pieces titles are made of: letters (X too, which no rule may strip), spaces and other
#: White_Space, controls, combining marks, a ZWJ family, a flag, CJK.
_PIECES = [
    "a",
    "X",
    "é",
    " ",
    "  ",
    "\t",
    "\n",
    "\u00a0",
    "\u3000",
    "\u0000",
    "\u001f",
    "\u0301",
    "q\u0307\u0323",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f1eb\U0001f1f7",
    "東京",
]
_texts = st.lists(st.sampled_from(_PIECES), max_size=90).map("".join)


def _boundaries(text: str) -> list[int]:
    """Where the extended grapheme clusters of `text` end (0 included)."""
    return [0, *(m.end() for m in _GRAPHEME.finditer(text))]


@settings(max_examples=300, deadline=None)
@given(_texts)
@example("a" * 63 + " b")
@example("b" * 63 + "\U0001f1eb\U0001f1f7")
def test_a_title_is_a_whole_cluster_prefix_of_at_most_64_code_points(raw: str) -> None:
    """CONTRACT §2 step 3, for any text: at most 64 code points, cut at a cluster boundary
    of the whole normalised string (no cluster split), as long as that allows, and no space
    at either end; nothing survives as None, never as ""."""
    normalized = normalize_text(raw)
    title = normalize_title(raw)
    if title is None:
        assert normalized.strip(" ") == "" or _boundaries(normalized)[1] > 64
        return
    assert 0 < len(title) <= 64
    assert title == title.strip(" ")
    bounds = _boundaries(normalized)
    cut = max(b for b in bounds if b <= 64)
    assert normalized.startswith(title)
    assert title == normalized[:cut].rstrip(" ")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(categories=["L", "N", "P", "S"]), max_size=40))
def test_normalisation_leaves_a_text_without_spaces_or_controls_as_it_is(raw: str) -> None:
    assert normalize_text(raw) == unicodedata.normalize("NFC", raw)


def test_a_long_first_message_stores_a_bounded_title_on_every_path(
    live_server: LiveServer,
) -> None:
    """Whichever way a session gets its title (its first run, the control plane's stored
    or legacy history), a first message of any length is cut by the rule, on every read."""
    long_text = "long " + "x" * 99_995  # the longest message a server takes (decision 0193)
    expected = ("long " + "x" * 59)[:64]
    control = live_server.control()
    client = live_server.client()
    made = []
    for legacy in (False, True):
        body = {"token": "dev-alice", "messages": [message(long_text)], "legacy": legacy}
        answer = control.post("/_stub/sessions", json=body)
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["id"])
    fresh = new_session(client)
    start_run(client, fresh, long_text)
    made.append(fresh)
    listed = {item["id"]: item["title"] for item in client.get("/v1/sessions").json()["items"]}
    for session_id in made:
        assert client.get(f"/v1/sessions/{session_id}").json()["title"] == expected
        assert listed[session_id] == expected
