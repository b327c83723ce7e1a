"""``ferrymq backup`` and ``ferrymq restore``: a whole stopped queue manager in one tar file.

A backup holds what makes the queue manager: ``config.json``, the journal's segments (its
messages, object definitions and authority records), ``users.json``, and the logs; not
what belongs to one run (``run.lock``, ``ferrymq.pid``, ``qmgr.sock``, ``health.json``,
``status.json``, the journal's ``LOCK``). Members lie under ``qmgr/``; ``MANIFEST.json``,
the last member, names each file with its size, mode and SHA-256.

Only a stopped queue manager is backed up: its journal is then a consistent whole on
disk, and the run lock is held for the whole backup so that no ``start`` can slip in.

``restore`` never trusts the archive: it reads the manifest first, accepts only regular
files under ``qmgr/`` that the manifest names (no links, devices, absolute paths or
``..``), copies each with its size bounded by the manifest, checks every SHA-256, and
only then moves the new data directory into place, directories 0700 and files 0600.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, Any

import click

from ferrymq import __version__
from ferrymq.cli import private
from ferrymq.cli.dump import progress_bar
from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import QmgrDir, check_name, now_iso, port_owner, write_json
from ferrymq.store.segments import fsync_dir

FORMAT = "ferrymq-backup"
VERSION = 1
MANIFEST = "MANIFEST.json"
PREFIX = "qmgr"
MAX_MANIFEST = 16 * 1024 * 1024
MAX_FILES = 100_000
_RUN_STATE = {"run.lock", "ferrymq.pid", "qmgr.sock", "health.json", "status.json", "journal/LOCK"}
_COPY = 1024 * 1024


class _Hashing:
    """A file read for tarfile that hashes what passes."""

    def __init__(self, f: IO[bytes], advance: Callable[[int], None]) -> None:
        self.f, self.advance = f, advance
        self.sha = hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.sha.update(data)
        self.advance(len(data))
        return data


def _files(root: Path) -> list[Path]:
    """The files a backup takes, relative to the data directory, sorted."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        st = path.lstat()
        if rel.as_posix() in _RUN_STATE or not stat.S_ISREG(st.st_mode):
            continue
        out.append(rel)
    return out


def backup(home: Path, name: str, target: Path, show_progress: bool = False) -> dict[str, Any]:
    """Write stopped queue manager ``name`` to tar file ``target`` (made 0600, through a
    temporary file fsynced and renamed, so a failure leaves no half archive).

    Raises:
        CliError: UNKNOWN_QMGR; RUNNING (it runs: a live journal is not a backup); EXISTS
            (``target`` exists); USAGE (it cannot be written).
    """
    qdir = QmgrDir(home, name).require()
    lock = qdir.acquire_lock(patience=0.5)
    if lock is None:
        pid = qdir.read_pid()
        raise CliError(Exit.RUNNING, "qmgr_running", f"queue manager {name} is running (pid {pid}): a backup is "
                       "taken from a stopped queue manager, whose journal is complete and consistent on disk. Stop it "
                       f"(ferrymq stop {name}) and back it up, or copy queues of a running one with ferrymq dump",
                       qmgr=name, pid=pid)
    if target.exists():
        lock.close()
        raise CliError(Exit.EXISTS, "file_exists", f"{target} exists; choose another name or remove it",
                       file=str(target))
    started = time.monotonic()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    entries: list[dict[str, Any]] = []
    try:
        files = _files(qdir.path)
        total = sum((qdir.path / rel).stat().st_size for rel in files)
        fd = private.open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar, \
                progress_bar(f"backing up {name}", total, show_progress) as advance:
            for rel in files:
                path = qdir.path / rel
                st = path.stat()
                info = tarfile.TarInfo(f"{PREFIX}/{rel.as_posix()}")
                info.size, info.mtime, info.mode = st.st_size, int(st.st_mtime), private.FILE_MODE
                with open(path, "rb") as f:
                    reader = _Hashing(f, advance)
                    tar.addfile(info, reader)  # read() is all tarfile uses
                entries.append({"path": rel.as_posix(), "size": st.st_size, "sha256": reader.sha.hexdigest(),
                                "mode": "0600"})
            manifest = {"format": FORMAT, "version": VERSION, "queue_manager": name, "created": now_iso(),
                        "ferrymq_version": __version__, "last_state": qdir.read_status().get("state", "created"),
                        "files": entries}
            raw = json.dumps(manifest, indent=2, sort_keys=True).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mtime, info.mode = len(raw), int(time.time()), private.FILE_MODE
            tar.addfile(info, io.BytesIO(raw))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise CliError(Exit.USAGE, "file_unwritable", f"cannot write {target}: {exc}", file=str(target)) from None
    finally:
        lock.close()
    return {"queue_manager": name, "file": str(target), "files": len(entries), "bytes": total,
            "archive_bytes": target.stat().st_size, "seconds": round(time.monotonic() - started, 3)}


def _damaged(source: Path, message: str, **fields: Any) -> CliError:
    return CliError(Exit.DAMAGED, "backup_damaged", f"{source}: {message}; nothing was restored", file=str(source),
                    **fields)


def _manifest(tar: tarfile.TarFile, source: Path) -> dict[str, Any]:
    """The archive's manifest, checked for shape.

    Raises:
        CliError(DAMAGED, backup_damaged): none, too large, or not one this version reads.
    """
    try:
        member = tar.getmember(MANIFEST)
    except KeyError:
        raise _damaged(source, f"no {MANIFEST}: not a ferrymq backup, or cut short") from None
    if not member.isreg() or member.size > MAX_MANIFEST:
        raise _damaged(source, f"{MANIFEST} is not a file of at most {MAX_MANIFEST} bytes")
    f = tar.extractfile(member)
    assert f is not None  # a regular member
    try:
        doc = json.loads(f.read(MAX_MANIFEST))
    except ValueError as exc:
        raise _damaged(source, f"{MANIFEST} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise _damaged(source, f"{MANIFEST} is not a {FORMAT} manifest of version {VERSION}")
    files = doc.get("files")
    if not isinstance(files, list) or len(files) > MAX_FILES or not isinstance(doc.get("queue_manager"), str):
        raise _damaged(source, f"{MANIFEST} lacks its queue_manager or files (at most {MAX_FILES})")
    for entry in files:
        ok = (isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("size"), int)
              and isinstance(entry.get("sha256"), str) and entry["size"] >= 0)
        if not ok or not _safe(entry["path"]):
            raise _damaged(source, f"{MANIFEST} names a file it may not: {str(entry)[:120]}")
    return doc


def _safe(rel: str) -> bool:
    """A path inside the data directory: relative, no ``..``, nothing odd."""
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and all(part not in ("", ".", "..") for part in p.parts) \
        and "\0" not in rel and "\\" not in rel


def restore(home: Path, source: Path, name: str | None = None, port: int | None = None,
            show_progress: bool = False) -> dict[str, Any]:
    """Make a queue manager of ``home`` from backup ``source`` (as ``name``, default the
    one it was; ``port``: another port in its config).

    Raises:
        CliError: DAMAGED (the archive fails a check: which file, which rule), EXISTS (a
            queue manager of that name exists here), PORT_IN_USE, NAME_ERROR, USAGE.
    """
    started = time.monotonic()
    try:
        with tarfile.open(source, mode="r:") as tar:
            return _restore(home, tar, source, name, port, show_progress, started)
    except tarfile.TarError as exc:  # a header that breaks off or is not one: cut short or damaged
        raise _damaged(source, f"not a tar file, or one damaged or cut short: {exc}") from None
    except OSError as exc:  # reading the archive, or writing the new data directory (a full disk)
        raise CliError(Exit.USAGE, "restore_failed", f"cannot restore from {source}: {exc}; nothing was restored",
                       file=str(source)) from None


def _restore(home: Path, tar: tarfile.TarFile, source: Path, name: str | None, port: int | None,
             show_progress: bool, started: float) -> dict[str, Any]:
    """restore() with the archive open (tarfile.TarError escapes: the caller names it)."""
    manifest = _manifest(tar, source)
    target_name = check_name(name or manifest["queue_manager"])
    qdir = QmgrDir(home, target_name)
    if qdir.exists():
        raise CliError(Exit.EXISTS, "qmgr_exists", f"queue manager {target_name} already exists in {qdir.path}; "
                       "restore under another name with --name, or delete it first", qmgr=target_name)
    staging = home / ".restoring" / f"{target_name}.{os.getpid()}"
    private.make_dir(staging.parent, parents=True, exist_ok=True)
    private.make_dir(staging)
    try:
        total = _extract(tar, manifest, source, staging, show_progress)
        config = _adjust_config(staging, source, target_name, port)
        if target_name != manifest["queue_manager"]:
            _follow_name(home, staging, manifest["queue_manager"], target_name)
        holder = port_owner(home, config["host"], config["port"], other_than=target_name)
        if holder is not None:
            raise CliError(Exit.PORT_IN_USE, "port_in_use", f"port {config['port']} of the restored queue manager "
                           f"belongs to queue manager {holder} of {home}; restore with --port N (0: any free port)",
                           qmgr=target_name, holder=holder, port=config["port"])
        private.make_dir(qdir.path.parent, parents=True, exist_ok=True)
        os.rename(staging, qdir.path)
        fsync_dir(qdir.path.parent)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            staging.parent.rmdir()
    return {"queue_manager": target_name, "from_queue_manager": manifest["queue_manager"], "file": str(source),
            "data_dir": str(qdir.path), "files": len(manifest["files"]), "bytes": total,
            "backup_created": manifest.get("created"), "port": config["port"],
            "seconds": round(time.monotonic() - started, 3)}


def _extract(tar: tarfile.TarFile, manifest: dict[str, Any], source: Path, staging: Path, show: bool) -> int:
    """Copy each manifest file out of ``tar`` into ``staging``, checking size and SHA-256."""
    wanted = {f"{PREFIX}/{e['path']}": e for e in manifest["files"]}
    members = {m.name: m for m in tar.getmembers() if m.name != MANIFEST}
    extra = sorted(set(members) - set(wanted))
    missing = sorted(set(wanted) - set(members))
    if extra or missing:
        raise _damaged(source, f"the archive and its manifest disagree: not in the manifest {extra[:5]}, "
                       f"missing from the archive {missing[:5]}")
    total = int(sum(e["size"] for e in manifest["files"]))
    with progress_bar("restoring", total, show) as advance:
        for member_name, entry in wanted.items():
            member = members[member_name]
            if not member.isreg() or member.size != entry["size"]:
                raise _damaged(source, f"{member_name} is not a regular file of {entry['size']} bytes",
                               member=member_name)
            path = staging.joinpath(*PurePosixPath(entry["path"]).parts)
            private.make_dir(path.parent, parents=True, exist_ok=True)
            src = tar.extractfile(member)
            assert src is not None
            sha = hashlib.sha256()
            with os.fdopen(private.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as out:
                left = entry["size"]
                while left:
                    chunk = src.read(min(_COPY, left))
                    if not chunk:
                        raise _damaged(source, f"{member_name} is cut short", member=member_name)
                    sha.update(chunk)
                    out.write(chunk)
                    left -= len(chunk)
                    advance(len(chunk))
                out.flush()
                os.fsync(out.fileno())
            if sha.hexdigest() != entry["sha256"]:
                raise _damaged(source, f"{member_name} does not match its SHA-256 in the manifest (damaged)",
                               member=member_name)
    for d in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
        os.chmod(d, private.DIR_MODE)
    return total


def _adjust_config(staging: Path, source: Path, name: str, port: int | None) -> dict[str, Any]:
    """config.json under its new name (and port): the directory and the config must agree."""
    path = staging / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(config, dict) or not isinstance(config.get("port"), int):
            raise ValueError("not a queue manager's config")
    except (OSError, ValueError) as exc:
        raise _damaged(source, f"its config.json cannot be read: {exc}") from None
    config["name"] = name
    if port is not None:
        if not 0 <= port < 65536:
            raise CliError(Exit.USAGE, "port_invalid", f"port {port} is out of range (0 to 65535; 0 = any free port)")
        config["port"] = port
    write_json(path, config)
    return config


def _follow_name(home: Path, staging: Path, old: str, new: str) -> None:
    """What names the queue manager follows its new name, written in its own journal
    before the directory is put in place: the authority records on the queue manager
    object (their profile is its name), or nobody but administrators could connect. The
    rest that names it (QMNAME, QMID, the queue manager's own identity) is derived from
    the name at each start."""
    from ferrymq.cli.runner import open_engine  # the engine is loaded only by commands that need it

    staged = QmgrDir(home, new)
    staged.path = staging
    qm, journal = open_engine(staged, new)
    try:
        qm.state.authority.rename_qmgr(old, new)
        qm.take_sync_lsn()
        journal.sync()
    finally:
        journal.close()


def register(group: click.Group, command: Callable[[Any], Any]) -> None:
    """Add ``backup`` and ``restore`` to ``ferrymq``."""

    @group.command(name="backup")
    @click.argument("name")
    @click.option("--file", "-f", "file", required=True, type=click.Path(dir_okay=False),
                  help="The tar file to write (it must not exist).")
    @command
    def backup_cmd(home: Path, out: Any, name: str, file: str) -> None:
        """Back up stopped queue manager NAME into one tar file: config, journal, users and
        authorities, logs, with a manifest of SHA-256 checksums."""
        info = backup(home, name, Path(file), show_progress=not out.json)
        out.result(info, f"Queue manager {name} backed up to {file}: {info['files']} files, {info['bytes']:,} bytes.")

    @group.command(name="restore")
    @click.argument("file", type=click.Path(dir_okay=False, exists=True))
    @click.option("--name", "qmgr", default=None, help="The restored queue manager's name (default: the one it was).")
    @click.option("--port", "-p", type=int, default=None, help="Another port for it (0: any free port at each start).")
    @command
    def restore_cmd(home: Path, out: Any, file: str, qmgr: str | None, port: int | None) -> None:
        """Restore a backup made by ferrymq backup into this home (checksums verified
        first); then start it with ferrymq start."""
        info = restore(home, Path(file), qmgr, port, show_progress=not out.json)
        out.result(info, f"Queue manager {info['queue_manager']} restored from {file} into {info['data_dir']}.\n"
                         f"Start it with: ferrymq start {info['queue_manager']}")
