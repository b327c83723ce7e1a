"""The compiled code of the frames' generated functions, kept between processes.

Every process that imports the protocol generates some 260 small functions from the
frames' declarations (ferrymq.protocol.layout) and compiling them was most of the import's
time (0.3-0.5 s a process: every `ferrymq` command, every client program and the queue
manager itself pays it). The generated source is the same from one run to the next, so its
compiled code is kept as Python keeps a module's: marshalled into the package's own
``__pycache__`` directory, beside the ``.pyc`` files, under the interpreter's cache tag.

The file holds code, so it is loaded only when it is as trusted as the package's own
modules: a regular file (no symbolic link), owned by this process's user or by the owner of
the package, writable by nobody else, in a directory writable by nobody else, and at most
MAX_BYTES long. It is never read from anywhere else, and nothing from a connection ever
reaches it. Each entry is keyed by a hash of the name and source it was compiled from, so a
changed declaration misses and is compiled afresh, and an untrusted, unreadable, truncated
or foreign file is ignored as if absent.
Nothing is written when Python is told not to write bytecode (``-B``,
``PYTHONDONTWRITEBYTECODE``) or the directory is not writable.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
import tempfile
from pathlib import Path
from types import CodeType

_MAGIC = b"ferrymq-frames-1\n"
MAX_BYTES = 16 << 20  # the frames' code is ~0.3 MiB; anything far bigger is not ours


def _default_path() -> Path:
    return Path(__file__).parent / "__pycache__" / f"frames.{sys.implementation.cache_tag}.marshal"


def _trusted(st: os.stat_result, owners: set[int]) -> bool:
    return st.st_uid in owners and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read_trusted(path: Path) -> bytes | None:
    """The file's bytes when it may be trusted with code (the module docstring), else None."""
    owners = {os.geteuid(), Path(__file__).stat().st_uid}
    try:
        if not _trusted(path.parent.stat(), owners):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or not _trusted(st, owners) or st.st_size > MAX_BYTES:
            return None
        try:
            return f.read(MAX_BYTES + 1)
        except OSError:
            return None


class CodeCache:
    """Compiled code by (name, source); ``save`` writes what was compiled since loading."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else _default_path()
        self._code: dict[bytes, CodeType] = self._load()
        self._used: set[bytes] = set()
        self.misses = 0

    def _load(self) -> dict[bytes, CodeType]:
        raw = _read_trusted(self.path)
        if raw is None or not raw.startswith(_MAGIC):
            return {}
        try:
            table = marshal.loads(raw[len(_MAGIC):])
        except (EOFError, ValueError, TypeError):
            return {}
        if not isinstance(table, dict):
            return {}
        return {k: v for k, v in table.items() if isinstance(k, bytes) and isinstance(v, CodeType)}

    @staticmethod
    def _key(name: str, source: str) -> bytes:
        return hashlib.blake2b(f"{name}\0{source}".encode(), digest_size=16).digest()

    def compile(self, source: str, name: str) -> CodeType:
        """``compile(source, name, "exec")``, from the cache when it holds it."""
        key = self._key(name, source)
        self._used.add(key)
        code = self._code.get(key)
        if code is None:
            code = compile(source, name, "exec")
            self._code[key] = code
            self.misses += 1
        return code

    def save(self) -> None:
        """Write the cache if anything was compiled since it was read: the code this process
        used, so that code of declarations since changed does not pile up (atomically: readers
        see the old file or the new one); best effort, as Python's own ``.pyc`` writing."""
        if not self.misses or sys.dont_write_bytecode:
            return
        try:
            self.path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".frames-")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(_MAGIC + marshal.dumps({k: self._code[k] for k in self._used}))
                os.chmod(tmp, Path(__file__).stat().st_mode & 0o644)  # readable as the .pyc files are, writable by us
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return
        self.misses = 0
