"""A queue manager's files are private to its user (directories 0700, files 0600) whatever
the umask: the journal (segments, compaction outputs, its lock), the CLI's files (config,
status, health, pid, lock, log) and the tightening of a directory made with looser modes."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ferrymq.cli import private
from ferrymq.cli.home import HealthFile, QmgrDir, write_json
from ferrymq.store.file import FileJournal


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the common default: would make 0644 files and 0755 directories
    try:
        yield
    finally:
        os.umask(old)


def open_to_others(root: Path) -> list[str]:
    """Every path under ``root`` (itself included) with any group or other permission."""
    out = []
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        mode = stat.S_IMODE(st.st_mode)
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if mode & 0o077 or (mode | want) != want:
            out.append(f"{path.relative_to(root)} {mode:o}")
    return out


@pytest.mark.usefixtures("loose_umask")
def test_journal_files_are_private_through_writes_compaction_and_reopen(tmp_path: Path) -> None:
    d = tmp_path / "journal"
    kw = {"segment_size": 256, "compact_ratio": 0.1, "compact_min_bytes": 1, "compact_step_bytes": 256}
    j = FileJournal(d, **kw)
    j.load()
    for i in range(1, 60):
        j.add(i, 1, bytes([i]) * 100)
        j.sync()
    for i in range(1, 50):
        j.delete(i)
    j.sync()
    j.compact()
    j.close()
    j = FileJournal(d, **kw)
    assert [r.record_id for r in j.load().records] == list(range(50, 60))
    j.add(100, 1, b"after reopen")
    j.sync()
    j.close()
    assert len(list(d.glob("*.seg"))) > 1
    assert open_to_others(d) == []


@pytest.mark.usefixtures("loose_umask")
def test_cli_files_are_private(tmp_path: Path) -> None:
    qdir = QmgrDir(tmp_path / "home", "QM1")
    private.make_dir(qdir.path, parents=True)
    write_json(qdir.config_file, {"name": "QM1"})
    qdir.write_status(state="running")
    lock = qdir.acquire_lock()
    assert lock is not None
    lock.close()
    HealthFile(qdir.health_file).write({"state": "healthy"})
    private.write_private(qdir.pid_file, "1\n")
    with private.append_file(qdir.log_file) as f:
        f.write(b"a line\n")
    assert sorted(p.name for p in qdir.path.iterdir()) == sorted(
        ["config.json", "status.json", "run.lock", "health.json", "ferrymq.pid", "ferrymq.log"])
    assert open_to_others(tmp_path / "home") == []


def test_tighten_takes_group_and_other_permissions_off(tmp_path: Path) -> None:
    root = tmp_path / "QM1"
    (root / "journal").mkdir(parents=True, mode=0o755)
    root.chmod(0o755)
    seg = root / "journal" / "1.seg"
    seg.write_bytes(b"body")
    seg.chmod(0o644)
    config = root / "config.json"
    config.write_text("{}")
    config.chmod(0o600)  # already private: left alone
    (root / "link").symlink_to("/etc/hostname")  # never followed nor changed
    changed = private.tighten(root)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in changed) == ["QM1", "QM1/journal", "QM1/journal/1.seg"]
    assert open_to_others(root) == []
    assert private.tighten(root) == []


def test_a_loose_data_directory_is_tightened_at_start_with_one_log_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from ferrymq.cli.runner import _make_private

    qdir = QmgrDir(tmp_path / "home", "QM1")
    qdir.journal_dir.mkdir(parents=True)
    for p in (qdir.path, qdir.journal_dir):
        p.chmod(0o755)
    (qdir.journal_dir / "0-1.seg").write_bytes(b"x")
    (qdir.journal_dir / "0-1.seg").chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="ferrymq.cli"):
        _make_private(qdir)
        _make_private(qdir)  # already private: no second line
    lines = [r.getMessage() for r in caplog.records if "data_dir_tightened" in r.getMessage()]
    assert len(lines) == 1 and "paths=3" in lines[0]
    assert open_to_others(qdir.path) == []


@pytest.mark.usefixtures("loose_umask")
def test_the_mqsc_history_is_private_new_or_old(tmp_path: Path) -> None:
    import readline

    from ferrymq.cli.mqsc import save_history

    new, old = tmp_path / "new_history", tmp_path / "old_history"
    old.write_text("DISPLAY QMGR\n")
    old.chmod(0o644)  # as readline wrote it before
    readline.add_history("DISPLAY QLOCAL(*)")
    for path in (new, old):
        save_history(path)
        assert "DISPLAY QLOCAL(*)" in path.read_text()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
