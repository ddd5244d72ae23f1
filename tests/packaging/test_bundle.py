"""`make dist`'s bundle, built from the spec into a temporary folder, opens the window with
the bundled demo server on a real X server with no Python anywhere in its environment, and
exits cleanly when told to close; its window carries the application icon.

About a minute to build and ten seconds to run on this machine (decision 0200), so it runs
with the suite; `CONVERGE_DIST_TEST=0` skips it. It skips, saying what to install, without
Xvfb or PyInstaller.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.packaging import x11_close

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "converge.spec"
DEADLINE = 90.0
#: The main window once the demo server is up: "Converge — alice on 127.0.0.1:PORT (built-in
#: demo)" (the names come wrapped in Unicode isolates).
DEMO_TITLE = re.compile(
    r'"Converge[^"\n]*alice[^"\n]* on [^"\n]*127\.0\.0\.1:\d+[^"\n]*built-in demo'
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(400),
    pytest.mark.skipif(os.environ.get("CONVERGE_DIST_TEST") == "0", reason="CONVERGE_DIST_TEST=0"),
]


def _missing() -> str | None:
    for tool, package in (("Xvfb", "xvfb"), ("xwininfo", "x11-utils"), ("xprop", "x11-utils")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {package})"
    if importlib.util.find_spec("PyInstaller") is None:
        return "PyInstaller is not installed (the dev extra: make .venv/.installed)"
    return None


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if reason := _missing():
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            str(out / "dist"),
            "--workpath",
            str(out / "build"),
            str(SPEC),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    executable = out / "dist" / "converge" / "converge"
    assert os.access(executable, os.X_OK)
    return executable


@pytest.fixture
def display(tmp_path: Path) -> Iterator[str]:
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read, "rb") as pipe:
            number = pipe.readline().decode().strip()
        assert number.isdigit(), "Xvfb did not start"
        yield f":{number}"
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


def _windows(display: str) -> str:
    result = subprocess.run(
        ["xwininfo", "-root", "-tree"],
        env={"DISPLAY": display, "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout


def test_the_bundle_holds_what_the_window_needs(bundle: Path) -> None:
    internal = bundle.parent / "_internal"
    plugins = internal / "PySide6" / "Qt" / "plugins"
    assert (plugins / "platforms" / "libqxcb.so").exists()
    assert (plugins / "platforms" / "libqoffscreen.so").exists()
    assert (plugins / "imageformats" / "libqsvg.so").exists()
    # The X11 libraries the xcb plugin links (PITFALLS §9), so the user needs none of them.
    for library in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
        assert (internal / library).exists(), library
    assert (internal / "app" / "icons" / "io.converge.Converge-256.png").exists()
    for svg in (ROOT / "ui" / "icons" / "lucide").glob("*.svg"):  # the toolbar's icons
        assert (internal / "ui" / "icons" / "lucide" / svg.name).exists(), svg.name
    assert (internal / "ui" / "icons" / "lucide" / "LICENSE").exists()
    assert any((internal / "server_stub" / "db" / "migrations" / "versions").glob("0001_*.py"))
    assert not (internal / "pytest").exists() and not (internal / "boto3").exists()
    # The window's compiled translations and Qt's own for its standard buttons (decision 0206).
    for language in ("de", "ar"):
        assert (internal / "ui" / "translations" / f"converge_{language}.qm").exists()
        assert (internal / "PySide6" / "Qt" / "translations" / f"qtbase_{language}.qm").exists()


@pytest.mark.parametrize("close", ["wm_delete", "sigterm"])
def test_the_bundle_opens_the_demo_window_without_python(
    bundle: Path, display: str, tmp_path: Path, close: str
) -> None:
    """Closed from the title bar (what a window manager sends) or with SIGTERM (a session
    ending): either way the window closes, the demo server stops, and the exit code is 0."""
    if close == "wm_delete" and not x11_close.available():
        pytest.skip("libX11 is not installed (apt-get install libx11-6)")
    empty_bin = tmp_path / "bin"  # a PATH with no Python on it
    empty_bin.mkdir()
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": str(empty_bin),
        "DISPLAY": display,
        "LANG": "C.UTF-8",
        "QT_QPA_PLATFORM": "xcb",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    assert shutil.which("python3", path=env["PATH"]) is None
    assert "PYTHONHOME" not in env and "PYTHONPATH" not in env
    log = (tmp_path / "app.log").open("wb")
    app = subprocess.Popen(
        [str(bundle), "--profile", str(tmp_path / "profile")],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        tree = ""
        while time.monotonic() < deadline and app.poll() is None:
            tree = _windows(display)
            if DEMO_TITLE.search(tree):
                break
            time.sleep(0.2)  # polling the X server, not standing in for a signal
        output = (tmp_path / "app.log").read_text(errors="replace")
        assert app.poll() is None, f"the bundle exited with {app.returncode}:\n{output}"
        assert DEMO_TITLE.search(tree), f"no demo window on {display}:\n{tree}\n{output}"
        assert "built-in demo server at http://127.0.0.1:" in output
        # The window icon reached the window manager (the PNGs inside the bundle).
        line = next(x for x in tree.splitlines() if DEMO_TITLE.search(x))
        icon = subprocess.run(
            ["xprop", "-id", line.split()[0], "_NET_WM_ICON"],
            env={"DISPLAY": display, "PATH": os.environ.get("PATH", "")},
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        # (xprop shows the first sizes only: its output is cut at a length.)
        assert all(f"Icon ({n} x {n})" in icon for n in (16, 32, 48)), icon[:200]
        if close == "wm_delete":
            x11_close.send_wm_delete(display, int(line.split()[0], 16))
        else:  # SIGTERM closes the window too (app.desktop)
            app.send_signal(signal.SIGTERM)
        code = app.wait(timeout=30)
        output = (tmp_path / "app.log").read_text(errors="replace")
        assert code == 0, output
        assert "Traceback" not in output, output
        assert not DEMO_TITLE.search(_windows(display))
        profile_log = (tmp_path / "profile" / "converge.log").read_text(errors="replace")
        assert "bundled server stopped" in profile_log
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(timeout=10)
        log.close()
