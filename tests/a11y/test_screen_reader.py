"""The window as a screen reader reads it: AT-SPI on Linux, from outside the process.

One `converge` (the bundled demo server, its demo history) runs for the whole module on a
real X server (Xvfb: the offscreen platform has no AT-SPI bridge) with Qt's accessibility
bridge on, on a D-Bus session of its own (`dbus-run-session`) with the accessibility bus
(`at-spi-bus-launcher`). Debian's `/usr/bin/python3` with `python3-pyatspi` reads the
tree (`tests/a11y/atspi_probe.py`, a subprocess: pyatspi is not for the venv's Python),
polling with a deadline until the sidebar's rows have arrived. The module skips, saying
what to install, when any of those is missing (`.ci/run` installs them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest

from server_stub.domain.seed import TOPICS
from ui.sidebar.model import UNTITLED

SYSTEM_PYTHON = "/usr/bin/python3"
BUS_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
PROBE = Path(__file__).with_name("atspi_probe.py")
DEADLINE = 60.0
PACKAGES = "apt-get install python3-pyatspi xvfb at-spi2-core dbus"
ISOLATES = dict.fromkeys(map(ord, "\u2066\u2067\u2068\u2069"))

type Node = dict[str, Any]


def _missing() -> str | None:
    for tool in ("dbus-run-session", "Xvfb"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed ({PACKAGES})"
    if not Path(BUS_LAUNCHER).exists() or not Path(SYSTEM_PYTHON).exists():
        return f"at-spi2-core or the system Python is missing ({PACKAGES})"
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        return f"the system Python has no pyatspi ({PACKAGES})"
    return None


@dataclass
class Session:
    """Xvfb, a D-Bus session with the accessibility bus, and the app on them."""

    folder: Path
    env: dict[str, str] = field(default_factory=dict)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    files: list[IO[Any]] = field(default_factory=list)
    app: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        read, write = os.pipe()
        try:  # Xvfb picks a free display and writes its number to the pipe
            self._spawn(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write),
                    "-screen",
                    "0",
                    "1280x800x24",
                    "-nolisten",
                    "tcp",
                ],
                pass_fds=(write,),
            )
            os.close(write)
            write = -1
            with os.fdopen(read, "rb") as pipe:
                read = -1
                display = pipe.readline().decode().strip()
        finally:
            for fd in (read, write):
                if fd >= 0:
                    os.close(fd)
        assert display.isdigit(), "Xvfb did not start"
        # The bus lives as long as `cat` reads our stdin: closing it ends the session.
        bus = self._spawn(
            ["dbus-run-session", "--", "sh", "-c", 'echo "$DBUS_SESSION_BUS_ADDRESS"; exec cat'],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()
        assert address, "dbus-run-session gave no bus address"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CONVERGE_", "QT_"))}
        env.update(DISPLAY=f":{display}", DBUS_SESSION_BUS_ADDRESS=address)
        self.env = env
        self._spawn([BUS_LAUNCHER, "--launch-immediately"], env=env)
        log = (self.folder / "app.log").open("wb")
        self.files.append(log)
        app_env = dict(
            env,
            QT_QPA_PLATFORM="xcb",
            QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
            QT_ACCESSIBILITY="1",
        )
        self.app = self._spawn(
            [
                sys.executable,
                "-m",
                "app.main",
                "--profile",
                str(self.folder / "profile"),
                "--sync-interval",
                "0",
            ],
            env=app_env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )

    def _spawn(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        kwargs.setdefault("stdout", subprocess.DEVNULL)
        kwargs.setdefault("stderr", subprocess.DEVNULL)
        process = subprocess.Popen(argv, **kwargs)
        self.processes.append(process)
        return process

    def app_log(self) -> str:
        return (self.folder / "app.log").read_text(errors="replace")

    def probe(self, *args: str) -> Node:
        """The app's tree once ready (see `atspi_probe.py`); fails with why it was not."""
        done = subprocess.run(
            [SYSTEM_PYTHON, str(PROBE), "--app", "Converge", "--deadline", str(DEADLINE), *args],
            env=self.env,
            capture_output=True,
            timeout=DEADLINE + 30,
            check=False,
        )
        if done.returncode != 0:
            if self.app is not None and self.app.poll() is not None and "xcb" in self.app_log():
                pytest.skip("Qt's xcb platform cannot start here (PITFALLS §9 libraries)")
            raise AssertionError(
                f"probe {args} exited {done.returncode}: {done.stderr.decode()[-2000:]}\n"
                f"tree: {done.stdout.decode()[:2000]}\napp: {self.app_log()[-2000:]}"
            )
        tree: Node = json.loads(done.stdout)
        return tree

    def stop(self) -> None:
        if self.app is not None and self.app.poll() is None:
            self.app.send_signal(signal.SIGTERM)  # closes cleanly, stopping its server
            try:
                self.app.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.app.kill()
        for process in reversed(self.processes):
            if process.stdin is not None:
                process.stdin.close()  # ends the D-Bus session
            elif process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        for file in self.files:
            file.close()


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    reason = _missing()
    if reason:
        pytest.skip(reason)
    s = Session(tmp_path_factory.mktemp("a11y"))
    try:
        s.start()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def tree(session: Session) -> Node:
    """The tree once the sidebar has its rows."""
    return session.probe("--ready", "Conversations")


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node["children"]:
        yield from walk(child)


def find(node: Node, *, name: str | None = None, role: str | None = None) -> Node:
    for n in walk(node):
        if n["showing"] and (name is None or n["name"] == name) and (role in (None, n["role"])):
            return n
    raise AssertionError(f"no showing {role or 'object'} named {name!r}")


def frame(tree: Node) -> Node:
    return next(child for child in tree["children"] if child["role"] == "frame")


def test_the_window_title_names_the_app_the_account_and_the_server(tree: Node) -> None:
    title = frame(tree)["name"].translate(ISOLATES)
    assert re.fullmatch(
        r"Converge — alice on 127\.0\.0\.1:\d+ \(built-in demo server\) · profile \S+", title
    ), title


def test_the_toolbar_buttons_are_named_and_reachable_by_keyboard(tree: Node) -> None:
    toolbar = find(tree, role="tool bar")
    buttons = [n for n in toolbar["children"] if n["role"] == "push button" and n["showing"]]
    assert [b["name"] for b in buttons] == [
        "New Conversation",
        "Refresh",
        "Delete",
        "Settings",
        "Keyboard Shortcuts",
    ]
    assert all(b["focusable"] for b in buttons), buttons


def test_the_sidebar_rows_carry_the_conversation_titles(tree: Node) -> None:
    rows = find(tree, name="Conversations", role="list")["children"]
    conversations = [r["name"] for r in rows if r["role"] == "list item" and r["focusable"]]
    assert len(conversations) >= 10, conversations
    for name in conversations:
        title = name.split(", last activity")[0]
        # The seed's topics, some as "(old) …" or "… (part 2)", a long one cut at a word.
        seeded = any(topic[:24] in title for topic in TOPICS)
        assert seeded or title == UNTITLED, name
        assert "last activity" in name, name  # and when, in words


def test_the_search_box_composer_and_send_button_are_named(tree: Node) -> None:
    assert find(tree, name="Search conversations", role="text")["focusable"]
    assert find(tree, name="Message", role="text")["focusable"]
    assert find(tree, name="Send message", role="push button")["focusable"]


@pytest.fixture(scope="module")
def opened(session: Session, tree: Node) -> Node:
    """The tree once focusing the list has opened a conversation and its messages came."""
    return session.probe(
        "--ready", "Conversations", "--focus", "Conversations", "--wait-under", "Transcript"
    )


def test_focusing_the_list_opens_a_conversation_whose_messages_reach_the_screen_reader(
    opened: Node,
) -> None:
    after = opened
    rows = find(after, name="Conversations", role="list")
    focused = [r for r in rows["children"] if r["focused"]]
    assert len(focused) == 1, [r["name"] for r in rows["children"]]
    title = focused[0]["name"].split(", last activity")[0]
    assert find(after, name=title)  # the pane's header names the open conversation
    title = title.removesuffix("…")  # a long title is cut at a word: its start is in the text
    transcript = find(after, name="Transcript")
    words = [
        (n["name"], n.get("text", ""))
        for n in walk(transcript)
        if n is not transcript and (n["name"] or n.get("text"))
    ]
    assert any(title in name or title in text for name, text in words), words[:10]


def test_every_description_a_screen_reader_is_given_is_plain_words(opened: Node) -> None:
    """Qt hands the tooltip over as the description when none is set, and our tooltips are
    markup: the pane's title and the account label were read as tags."""
    described = [(n["name"], n["description"]) for n in walk(opened) if n["description"]]
    assert described, "nothing is described"
    marked = [pair for pair in described if re.search(r"<[a-z/][^>]*>", pair[1])]
    assert not marked, marked
