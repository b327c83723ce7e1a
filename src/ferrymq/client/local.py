"""Local bindings: reaching a queue manager started on this machine by its name alone.

IBM MQ applications connect to a queue manager of the same machine by name, with no
address (server bindings). ferrymq's equivalent is a Unix-domain socket in the queue
manager's data directory, ``$FERRYMQ_HOME/qmgrs/<name>/qmgr.sock`` (``FERRYMQ_HOME``
defaults to ``~/.ferrymq``): the server listens on it beside its TCP port, readable and
writable by its own user only (0600), and learns each peer's user from the socket
(SO_PEERCRED), as a bindings connection carries the OS user. ``ferrymq.client.connect``
and pymqi's ``connect(name)`` use it when given a queue-manager name and no address.

A socket address holds at most 107 bytes: a longer path is reached through the
directory's descriptor (``/proc/self/fd/N/qmgr.sock``), for binding and connecting alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

SOCKET_NAME = "qmgr.sock"
_MAX_ADDRESS = 100  # sun_path is 108 bytes with its NUL; keep a margin


def home_dir(explicit: str | None = None) -> Path:
    """``explicit``, else ``$FERRYMQ_HOME``, else ``~/.ferrymq`` (made absolute)."""
    raw = explicit or os.environ.get("FERRYMQ_HOME") or str(Path.home() / ".ferrymq")
    return Path(raw).expanduser().absolute()


def socket_path(qmgr: str, home: Path | None = None) -> Path:
    """Where queue manager ``qmgr`` of ``home`` (default: ``home_dir()``) listens locally."""
    return (home or home_dir()) / "qmgrs" / qmgr / SOCKET_NAME


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str]:
    """``path`` as a socket address, through its directory's descriptor when too long."""
    if len(os.fsencode(path)) <= _MAX_ADDRESS:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def listen(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` that only this user may use (0600); a file left
    there by a server that died is replaced (the caller holds the queue manager's run lock)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old = os.umask(0o177)  # created 0600: never a moment open to others
        try:
            with _address(path) as address:
                sock.bind(address)
        finally:
            os.umask(old)
        sock.listen(1024)
    except BaseException:
        sock.close()
        raise
    return sock


def dial(qmgr: str, timeout: float, home: Path | None = None) -> socket.socket:
    """A socket connected to local queue manager ``qmgr`` of ``home`` (default ``home_dir()``).

    Raises:
        OSError: no queue manager of that name listens in this home (FileNotFoundError,
            ConnectionRefusedError for one that ended without removing its socket).
    """
    path = socket_path(qmgr, home)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        with _address(path) as address:
            sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return sock


async def dial_async(qmgr: str, timeout: float, home: Path | None = None) -> socket.socket:
    """``dial`` for an event loop: a non-blocking socket connected without blocking the loop.

    Raises:
        OSError: as ``dial``; TimeoutError: nothing accepted within ``timeout``.
    """
    path = socket_path(qmgr, home)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        with _address(path) as address:
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, address), timeout)
    except BaseException:
        sock.close()
        raise
    return sock


def available(qmgr: str) -> bool:
    """Is there a local socket for ``qmgr`` in this home (it may still be stale)?"""
    return bool(qmgr.strip()) and socket_path(qmgr.strip()).exists()
