"""A queue manager's data directory is private to its user: directories 0700, files 0600.

Message bodies (journal segments), config, status and logs are nobody else's business on a
shared machine. Two mechanisms make it so, and both are needed:

- every file and directory is created with an explicit mode (``os.open(..., 0o600)``,
  ``mkdir(mode=0o700)``): a umask can only remove permission bits, so whatever umask the
  process has, nothing is born readable by others. The store does this too, since it is
  also used in-process without this CLI.
- the server process sets its umask to 0o077 once (``restrict_umask``), a backstop for files
  made by code that names no mode (a library's log file, a temporary file).

A data directory made before this rule (0755 directories, 0644 segments) is tightened when
the queue manager starts (``tighten``), and the server logs one line saying how many paths
it changed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077


def restrict_umask() -> int:
    """Make this process's future files private (umask 0o077); returns the previous umask."""
    return os.umask(UMASK)


def make_dir(path: Path, *, parents: bool = False, exist_ok: bool = False) -> None:
    """``path.mkdir`` with mode 0700 (parents made 0700 too)."""
    if parents and not path.parent.exists():
        make_dir(path.parent, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        if not exist_ok:
            raise


def open_private(path: Path, flags: int) -> int:
    """``os.open`` of ``path`` with ``flags`` (plus O_CLOEXEC), created 0600."""
    return os.open(path, flags | os.O_CLOEXEC, FILE_MODE)


def append_file(path: Path) -> BinaryIO:
    """``path`` open for binary appending, created 0600."""
    return os.fdopen(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")


def write_private(path: Path, text: str) -> None:
    """Replace ``path``'s content with ``text`` (created 0600)."""
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def tighten(root: Path) -> list[Path]:
    """Take group and other permissions off ``root`` and everything under it (0755
    directories become 0700, 0644 files 0600); returns the paths changed. Symbolic links are neither
    followed nor changed; sockets and other special files are left (the local socket is
    made 0600 by ``client.local.listen``)."""
    changed: list[Path] = []
    todo = [root]
    while todo:
        path = todo.pop()
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue  # gone meanwhile (a temporary file)
        if stat.S_ISDIR(st.st_mode):
            todo.extend(path.iterdir())
        elif not stat.S_ISREG(st.st_mode):
            continue
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o7077:  # group, other, setuid/setgid/sticky: the owner's bits stay as they are
            os.chmod(path, mode & 0o700)
            changed.append(path)
    return changed
