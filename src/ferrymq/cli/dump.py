"""``ferrymq dump`` and ``ferrymq load``: a queue's messages to a file and back (dmpmqmsg's job).

Both work over a client connection (the local socket, or ``--conn host(port)``), so the
queue manager keeps running. The file's format is ``cli.dumpfile`` (docs/cli.md).

``dump`` browses by default: the queue is left as it was. ``--move`` takes the messages
away, under syncpoint, in batches: each batch is written and fsynced before its unit of
work is committed, so a failure never loses a message. At worst (the connection lost
during a commit, whose outcome is then unknown) the last batch is both in the file and
still on the queue, and the file says so in a comment.

``load`` reads the whole file once to check it (a damaged file is refused before anything
is put, naming the line), then puts every message with MQPMO_SET_ALL_CONTEXT, so that its
descriptor is kept as it was (MsgId, CorrelId, context, group fields, report options),
under syncpoint, committed in batches. Expiry counts from the load, as the remaining time
the dump saw; BackoutCount starts again at 0 (a put cannot set it).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ferrymq.cli import private
from ferrymq.cli.dumpfile import MAX_DATA, DumpedMessage, DumpFileError, DumpWriter, read
from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import QmgrDir, now_iso
from ferrymq.cli.mqsc import control_client
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.client.message import Message
from ferrymq.client.sync import Client, Queue
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

DEFAULT_BATCH = 200
MAX_BATCH = 10_000
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([smhd]?)$")


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``2h``, ``7d`` as seconds.

    Raises:
        click.BadParameter: anything else.
    """
    m = _DURATION.match(text.strip())
    if not m:
        raise click.BadParameter(f"{text!r} is not a duration: a number with an optional unit s, m, h or d")
    return float(m.group(1)) * _UNITS[m.group(2)]


def put_time(md: MQMD) -> float | None:
    """When the message was put (PutDate and PutTime, GMT), in seconds since the epoch."""
    stamp = md.put_date + md.put_time
    if len(stamp) != 16 or not stamp.isdigit():
        return None
    try:
        when = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return when.timestamp() + int(stamp[14:]) / 100


@dataclass(frozen=True, slots=True)
class Selection:
    """Which messages a dump takes: by age (seconds since put), identifiers, count."""

    older_than: float | None = None
    newer_than: float | None = None
    count: int | None = None
    msg_id: bytes | None = None
    correl_id: bytes | None = None

    @property
    def by_age(self) -> bool:
        return self.older_than is not None or self.newer_than is not None

    def matches(self, md: MQMD, now: float) -> bool:
        if not self.by_age:
            return True
        put = put_time(md)
        if put is None:
            return False  # no put time to judge its age by
        age = now - put
        return ((self.older_than is None or age >= self.older_than)
                and (self.newer_than is None or age <= self.newer_than))

    def as_dict(self) -> dict[str, Any]:
        return {"older_than": self.older_than, "newer_than": self.newer_than, "count": self.count,
                "msg_id": self.msg_id.hex() if self.msg_id else None,
                "correl_id": self.correl_id.hex() if self.correl_id else None}


Advance = Callable[[int], None]


@contextlib.contextmanager
def progress_bar(label: str, total: int | None, show: bool) -> Iterator[Advance]:
    """A rich progress bar on stderr (when ``show`` and stderr is a terminal)."""
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, disable=not (show and console.is_terminal), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


def _connect(home: Path, name: str, conn: str | None, appl: str) -> Client:
    QmgrDir(home, name).require()
    try:
        return control_client(home, name, conn, appl, max_msg_length=MAX_DATA)
    except click.ClickException as exc:
        raise CliError(Exit.NOT_RUNNING, "qmgr_not_running", exc.message, qmgr=name) from None
    except (MQError, OSError) as exc:
        raise CliError(Exit.NOT_RUNNING, "qmgr_unreachable", f"queue manager {name} could not be reached: {exc}",
                       qmgr=name) from None


def _mq_failure(what: str, exc: MQError, **fields: Any) -> CliError:
    reason = getattr(exc, "reason", None)
    return CliError(Exit.USAGE, "mq_call_failed", f"{what}: {exc}", reason=reason, **fields)


def _open_file(path: Path, replace: bool) -> IO[bytes]:
    """The dump file, made 0600 (it holds message bodies); an existing one only with ``replace``."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if replace else os.O_EXCL)
    try:
        return os.fdopen(private.open_private(path, flags), "wb", buffering=1 << 20)
    except FileExistsError:
        raise CliError(Exit.EXISTS, "file_exists", f"{path} exists; give --replace to overwrite it",
                       file=str(path)) from None
    except OSError as exc:
        raise CliError(Exit.USAGE, "file_unwritable", f"cannot write {path}: {exc}", file=str(path)) from None


def _sync(f: IO[bytes]) -> None:
    f.flush()
    os.fsync(f.fileno())


class _Mover:
    """--move's units of work: written, fsynced, then committed, ``batch`` messages at a time."""

    def __init__(self, client: Client, f: IO[bytes], writer: DumpWriter, batch: int) -> None:
        self.client, self.f, self.writer, self.batch = client, f, writer, batch
        self.pending = 0  # messages written whose unit of work is not committed yet
        self.committed = 0
        self.committed_at = f.tell()

    def took(self) -> None:
        self.pending += 1
        if self.pending >= self.batch:
            self.commit()

    def commit(self) -> None:
        _sync(self.f)  # on disk before the queue manager forgets them
        self.client.commit()
        self.committed = self.writer.count
        self.committed_at = self.f.tell()
        self.pending = 0

    def abandon(self) -> str:
        """After a failure: back out the open unit of work and drop its messages from the
        file when the queue manager confirms they are back; otherwise keep them (they may
        be in both places, never in neither). Returns what the file's comment says."""
        if not self.pending:
            return ""
        try:
            self.client.backout()
        except (MQError, OSError):
            return (f"# interrupted: messages {self.committed + 1} to {self.writer.count} were taken in a unit "
                    "of work whose outcome is unknown: they may also still be on the queue\n")
        self.f.flush()
        self.f.seek(self.committed_at)
        self.f.truncate()
        self.writer.count = self.committed
        return ""


def dump(home: Path, name: str, queue: str, path: Path, *, move: bool = False, selection: Selection = Selection(),
         batch: int = DEFAULT_BATCH, conn: str | None = None, replace: bool = False,
         show_progress: bool = False) -> dict[str, Any]:
    """Write queue ``queue``'s messages (those ``selection`` takes) to ``path``.

    Raises:
        CliError: the queue manager does not run or refuses (the MQ reason named), the file
            exists (without ``replace``) or cannot be written.
    """
    client = _connect(home, name, conn, "ferrymq dump")
    started = time.monotonic()
    try:
        opts = C.MQOO_BROWSE | C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING | (C.MQOO_INPUT_SHARED if move else 0)
        try:
            q = client.open(queue, options=opts)
            depth = q.depth()
        except MQError as exc:
            raise _mq_failure(f"cannot open queue {queue} of {name} to dump it", exc, qmgr=name, queue=queue) from None
        total = depth if selection.count is None else min(depth, selection.count)
        header = {"queue_manager": name, "queue": queue, "created": now_iso(), "mode": "move" if move else "browse"}
        with _open_file(path, replace) as f:
            writer = DumpWriter(f, header)
            mover = _Mover(client, f, writer, batch) if move else None
            note = ""
            try:
                with progress_bar(f"{'moving' if move else 'dumping'} {queue}", total, show_progress) as advance:
                    _take(q, writer, mover, selection, batch, advance)
                if mover is not None:
                    mover.commit()
            except (MQError, OSError, ValueError) as exc:
                if mover is not None:
                    note = mover.abandon()
                _close_file(f, writer, note)
                raise _interrupted(exc, writer, path, name, queue, move) from None
            _close_file(f, writer, "")
        q.close()
    finally:
        with contextlib.suppress(MQError, OSError):
            client.disconnect()
    seconds = time.monotonic() - started
    return {"queue_manager": name, "queue": queue, "file": str(path), "mode": "move" if move else "browse",
            "messages": writer.count, "bytes": writer.bytes, "seconds": round(seconds, 3),
            "messages_per_second": round(writer.count / seconds) if seconds > 0 else None,
            "selection": selection.as_dict()}


def _close_file(f: IO[bytes], writer: DumpWriter, note: str) -> None:
    if note:
        f.write(note.encode("ascii"))
    writer.finish()
    _sync(f)


def _interrupted(exc: Exception, writer: DumpWriter, path: Path, name: str, queue: str, move: bool) -> CliError:
    what = "moved" if move else "dumped"
    return CliError(Exit.USAGE, "dump_interrupted", f"dump of {queue} stopped after {writer.count} messages "
                    f"{what} to {path} (a complete file of those): {type(exc).__name__}: {exc}",
                    qmgr=name, queue=queue, messages=writer.count, reason=getattr(exc, "reason", None))


def _take(q: Queue, writer: DumpWriter, mover: _Mover | None, sel: Selection, batch: int, advance: Advance) -> None:
    """The dump's loop: browse, or take under syncpoint (with a browse first when the age decides)."""
    left = sel.count
    if mover is not None and not sel.by_age and sel.msg_id is None and sel.correl_id is None:
        while left is None or left > 0:  # nothing to judge: take whole batches
            want = min(batch, MAX_BATCH) if left is None else min(batch, MAX_BATCH, left)
            got = q.get_batch(want, syncpoint=True, max_bytes=MAX_DATA)
            if not got:
                return
            for msg in got:
                _write(writer, msg)
                mover.took()
            advance(len(got))
            if left is not None:
                left -= len(got)
        return
    browse = C.MQGMO_BROWSE_FIRST
    while left is None or left > 0:
        try:
            msg = q.get(0.0, msg_id=sel.msg_id, correl_id=sel.correl_id, syncpoint=False,
                        options=browse)
        except NoMessageAvailable:
            return
        browse = C.MQGMO_BROWSE_NEXT
        if not sel.matches(msg.md, time.time()):
            continue
        if mover is not None:
            try:  # the message browsed, now taken; gone meanwhile (another getter, expiry): skipped
                msg = q.get(0.0, syncpoint=True, options=C.MQGMO_MSG_UNDER_CURSOR)
            except MQError as exc:
                if exc.reason in (C.MQRC_NO_MSG_UNDER_CURSOR, C.MQRC_NO_MSG_AVAILABLE):
                    continue
                raise
        _write(writer, msg)
        if mover is not None:
            mover.took()
        advance(1)
        if left is not None:
            left -= 1


def _write(writer: DumpWriter, msg: Message) -> None:
    if msg.data_length != len(msg.data):
        raise ValueError(f"message {msg.msg_id.hex()} came truncated ({len(msg.data)} of {msg.data_length} bytes)")
    writer.write(msg.md, msg._properties, msg.data)


def check_file(path: Path, advance: Advance | None = None, *, partial: bool = False) -> tuple[int, int, int | None]:
    """Read a dump file through once: (messages, body bytes, the line where a ``partial``
    file was cut or None).

    Raises:
        CliError(USAGE, dump_file_invalid): a defect, naming its line (with ``partial``, a
            defect other than the file ending early); or unreadable.
    """
    count = size = 0
    try:
        with open(path, "rb") as f:
            for m in read(f):
                count += 1
                size += len(m.data)
                if advance is not None:
                    advance(1)
    except DumpFileError as exc:
        if partial and exc.truncated:
            return count, size, exc.line
        hint = " (a dump that was killed: --partial loads its whole messages)" if exc.truncated else ""
        raise CliError(Exit.USAGE, "dump_file_invalid", f"{path}: {exc}; nothing was loaded{hint}",
                       file=str(path), line=exc.line) from None
    except OSError as exc:
        raise CliError(Exit.USAGE, "file_unreadable", f"cannot read {path}: {exc}", file=str(path)) from None
    return count, size, None


def load(home: Path, name: str, queue: str, path: Path, *, batch: int = DEFAULT_BATCH, conn: str | None = None,
         partial: bool = False, show_progress: bool = False) -> dict[str, Any]:
    """Put the messages of dump file ``path`` on ``queue``, their descriptors kept; with
    ``partial``, a file that ends early (a dump killed) gives its whole messages.

    Raises:
        CliError: the file is damaged (its line named; nothing is put), the queue manager
            does not run or refuses (e.g. 2035 without setall authority, 2053 queue full:
            the batches committed before stay, the count says how many).
    """
    started = time.monotonic()
    with progress_bar("checking the file", None, show_progress) as advance:
        count, size, cut = check_file(path, advance, partial=partial)
    client = _connect(home, name, conn, "ferrymq load")
    loaded = 0
    try:
        try:
            q = client.open(queue, options=C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT | C.MQOO_FAIL_IF_QUIESCING)
        except MQError as exc:
            hint = " (loading sets all context: it needs setall authority)" if exc.reason == C.MQRC_NOT_AUTHORIZED else ""
            raise _mq_failure(f"cannot open queue {queue} of {name} to load it{hint}", exc, qmgr=name,
                              queue=queue) from None
        try:
            with open(path, "rb") as f, progress_bar(f"loading {queue}", count, show_progress) as advance:
                pending: list[DumpedMessage] = []
                for m in read(f, partial=partial):
                    pending.append(m)
                    if len(pending) >= batch:
                        loaded += _put_batch(client, q, pending)
                        advance(len(pending))
                        pending = []
                loaded += _put_batch(client, q, pending)
        except (MQError, OSError, DumpFileError) as exc:
            with contextlib.suppress(MQError, OSError):
                client.backout()
            raise CliError(Exit.USAGE, "load_interrupted", f"load of {path} into {queue} stopped after {loaded} "
                           f"messages committed: {type(exc).__name__}: {exc}", qmgr=name, queue=queue,
                           messages=loaded, reason=getattr(exc, "reason", None)) from None
        q.close()
    finally:
        with contextlib.suppress(MQError, OSError):
            client.disconnect()
    seconds = time.monotonic() - started
    return {"queue_manager": name, "queue": queue, "file": str(path), "messages": loaded, "bytes": size,
            "cut_at_line": cut, "seconds": round(seconds, 3), "messages_per_second": round(loaded / seconds) if seconds > 0 else None}


def _put_batch(client: Client, q: Queue, batch: list[DumpedMessage]) -> int:
    """Put ``batch`` in one unit of work (asynchronous puts, checked before the commit)."""
    if not batch:
        return 0
    for m in batch:
        # A PropertySet passes as it is (types and descriptors kept): put takes any mapping.
        q.put(m.data, md=m.md, properties=cast("dict[str, Any]", m.properties) if m.properties else None,
              syncpoint=True, async_put=True, options=C.MQPMO_SET_ALL_CONTEXT)
    status = client.stat()
    if status.failures:
        error = status.first_error
        raise error if isinstance(error, MQError) else MQError(C.MQCC_FAILED, C.MQRC_UNEXPECTED_ERROR,
                                                               f"{status.failures} puts failed")
    client.commit()
    return len(batch)


def _hex_id(text: str | None, what: str) -> bytes | None:
    if text is None:
        return None
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise click.BadParameter(f"{what} must be hexadecimal, up to 48 digits") from None
    if len(raw) > 24:
        raise click.BadParameter(f"{what} is {len(raw)} bytes; the field holds 24")
    return raw.ljust(24, b"\0")


def register(group: click.Group, command: Callable[[Any], Any]) -> None:
    """Add ``dump`` and ``load`` to ``ferrymq`` (``command``: main's decorator)."""
    batch_option = click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=DEFAULT_BATCH,
                                show_default=True, help="Messages per unit of work.")
    conn_option = click.option("--conn", "-c", "conn", default=None,
                               help="Reach the queue manager at host(port) instead of its local socket.")

    @group.command(name="dump")
    @click.argument("name")
    @click.option("--queue", "-q", required=True, help="The queue to dump.")
    @click.option("--file", "-f", "file", required=True, type=click.Path(dir_okay=False), help="The dump file.")
    @click.option("--move", is_flag=True, help="Take the messages off the queue (under syncpoint, committed only "
                                               "once written and fsynced), instead of browsing.")
    @click.option("--older-than", default=None, help="Only messages put at least this long ago: 90, 90s, 15m, 2h, 7d.")
    @click.option("--newer-than", default=None, help="Only messages put at most this long ago.")
    @click.option("--count", "-n", type=click.IntRange(1), default=None, help="At most this many messages.")
    @click.option("--msg-id", default=None, help="Only the message(s) with this MsgId (hex).")
    @click.option("--correl-id", default=None, help="Only the messages with this CorrelId (hex).")
    @click.option("--replace", is_flag=True, help="Overwrite the file if it exists.")
    @batch_option
    @conn_option
    @command
    def dump_cmd(home: Path, out: Any, name: str, queue: str, file: str, move: bool, older_than: str | None,
                 newer_than: str | None, count: int | None, msg_id: str | None, correl_id: str | None,
                 replace: bool, batch: int, conn: str | None) -> None:
        """Write the messages of queue --queue of queue manager NAME to --file (like dmpmqmsg):
        every MQMD field, the properties and the body. Browses unless --move."""
        sel = Selection(None if older_than is None else parse_duration(older_than),
                        None if newer_than is None else parse_duration(newer_than), count,
                        _hex_id(msg_id, "--msg-id"), _hex_id(correl_id, "--correl-id"))
        info = dump(home, name, queue, Path(file), move=move, selection=sel, batch=batch, conn=conn,
                    replace=replace, show_progress=not out.json)
        out.result(info, f"{info['messages']:,} messages ({info['bytes']:,} bytes) "
                         f"{'moved' if move else 'copied'} from {queue} to {file} in {info['seconds']:.1f} s.")

    @group.command(name="load")
    @click.argument("name")
    @click.option("--queue", "-q", required=True, help="The queue to put the messages on.")
    @click.option("--file", "-f", "file", required=True, type=click.Path(dir_okay=False, exists=True),
                  help="A file written by ferrymq dump.")
    @click.option("--partial", is_flag=True, help="Accept a file that ends early (a dump killed before it "
                                                  "finished): load its whole messages before the cut. Any other "
                                                  "defect is still refused.")
    @batch_option
    @conn_option
    @command
    def load_cmd(home: Path, out: Any, name: str, queue: str, file: str, partial: bool, batch: int,
                 conn: str | None) -> None:
        """Put the messages of a dump --file on queue --queue of queue manager NAME, with
        their descriptors as they were (set all context: needs setall authority)."""
        info = load(home, name, queue, Path(file), batch=batch, conn=conn, partial=partial,
                    show_progress=not out.json)
        cut = "" if info["cut_at_line"] is None else f" (the file was cut at line {info['cut_at_line']})"
        out.result(info, f"{info['messages']:,} messages ({info['bytes']:,} bytes) loaded from {file} into "
                         f"{queue}{cut} in {info['seconds']:.1f} s.")
