"""The freedesktop entry and the AppStream metainfo validate with the distributions' own
tools, agree on one id, and install where a desktop looks for them."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import identity

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
DESKTOP = PACKAGING / "converge.desktop"
METAINFO = PACKAGING / "io.converge.Converge.metainfo.xml"
INSTALLER = PACKAGING / "install-desktop-entry.sh"


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    return path


def _entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_desktop_entry_validates() -> None:
    tool = _tool("desktop-file-validate", "desktop-file-utils")
    result = subprocess.run([tool, str(DESKTOP)], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_the_metainfo_validates() -> None:
    tool = _tool("appstreamcli", "appstream")
    result = subprocess.run(
        [tool, "validate", "--no-net", "--strict", str(METAINFO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_one_id_everywhere() -> None:
    entry = _entry(DESKTOP)
    assert entry["Icon"] == identity.APP_ID
    assert entry["Exec"] == "converge"
    assert entry["StartupWMClass"] == "converge"  # what Qt sets from argv[0]
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == identity.APP_ID
    assert root.findtext("launchable") == f"{identity.APP_ID}.desktop"
    assert root.findtext("icon") == identity.APP_ID


def test_the_installer_puts_entry_icons_and_metainfo_under_xdg_data_home(tmp_path: Path) -> None:
    data = tmp_path / "share"
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    subprocess.run(
        ["sh", str(INSTALLER), "/opt/converge/converge"], env=env, check=True, capture_output=True
    )
    installed = data / "applications" / f"{identity.APP_ID}.desktop"
    entry = _entry(installed)
    assert entry["Exec"] == "/opt/converge/converge"
    assert entry["TryExec"] == "/opt/converge/converge"
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    for size in identity.SIZES:
        png = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{identity.APP_ID}.png"
        assert png.read_bytes() == identity.icon_path(size).read_bytes()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{identity.APP_ID}.svg").exists()
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(
            ["desktop-file-validate", str(installed)], capture_output=True, text=True, check=False
        )
        assert check.returncode == 0, check.stdout
    subprocess.run(["sh", str(INSTALLER), "--uninstall"], env=env, check=True, capture_output=True)
    assert not installed.exists()
    assert not any(data.rglob(f"{identity.APP_ID}*"))


def test_the_installer_refuses_a_command_that_would_break_the_exec_line(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path))
    result = subprocess.run(
        ["sh", str(INSTALLER), "/opt/my apps/converge"], env=env, capture_output=True, check=False
    )
    assert result.returncode != 0
    assert not (tmp_path / "applications").exists()
