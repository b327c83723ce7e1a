"""What the control commands do, apart from how they print: each returns a dict (the JSON
output) or raises CliError.

``start`` launches ``python -m ferrymq.cli start NAME --foreground --notify-fd N`` in a
new session (no controlling terminal, its output in the data directory's log) and waits
on the pipe for the server's own word that it listens — or for the error that stopped it,
or for the pipe to close because the process died.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

from ferrymq.cli import logsetup, private, server_options
from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import (
    Config,
    LogConfig,
    QmgrDir,
    check_binding,
    is_loopback,
    list_names,
    now_iso,
    port_owner,
    remote_warning,
)

RUNNING = "Running"
STARTING = "Starting"
QUIESCING = "Quiescing"
ENDING = "Ending immediately"
ENDED_NORMALLY = "Ended normally"
ENDED_IMMEDIATELY = "Ended immediately"
ENDED_UNEXPECTEDLY = "Ended unexpectedly"
DAMAGED = "Damaged"

_ACTIVE = {RUNNING, STARTING, QUIESCING, ENDING}


def create(home: Path, name: str, host: str, port: int, server: dict[str, Any] | None = None,
           allow_remote: bool = False, log: LogConfig | None = None, exit_dirs: dict[str, str] | None = None, *,
           chlauth: bool = True) -> dict[str, Any]:
    """crtmqm: a data directory with its config and an initialized journal. ``server``:
    knobs of the server kept in its config (``cli.server_options``). ``allow_remote``: a
    ``host`` beyond loopback is accepted (``home.check_binding``). ``log``: the log's
    rotation and format (``cli.logsetup``; default: LogConfig()). ``exit_dirs``: exit_path
    and bulk_data_dir (``exit_directories``).

    Raises:
        CliError: EXISTS, NAME_ERROR, USAGE (port out of range, a host beyond loopback not
            allowed), PORT_IN_USE (another queue manager of this home owns the port), or
            DAMAGED if the new journal cannot be initialized.
    """
    qdir = QmgrDir(home, name)
    check_binding(name, host, allow_remote)
    _check_port(home, name, host, port)
    dirs = exit_directories(exit_dirs or {})
    private.make_dir(qdir.path.parent, parents=True, exist_ok=True)
    try:
        private.make_dir(qdir.path)
    except FileExistsError:
        raise CliError(Exit.EXISTS, "qmgr_exists", f"queue manager {name} already exists in {qdir.path}",
                       qmgr=name) from None
    from ferrymq.cli.runner import open_engine  # the engine is loaded only by commands that need it
    from ferrymq.engine.chlauth import ChannelAuthRecords, altered_stamp, with_defaults
    from ferrymq.mq.cfc import MQCHLA_DISABLED

    try:
        lock = qdir.acquire_lock(patience=0)
        assert lock is not None  # the directory is ours: nobody else can hold it yet
        with lock:
            config = Config(name, host, port, server=dict(server or {}), allow_remote=allow_remote,
                            log=log or LogConfig(), exit_path=dirs.get("exit_path", ""),
                            bulk_data_dir=dirs.get("bulk_data_dir", ""))
            qdir.save_config(config)
            private.make_dir(qdir.journal_dir)
            qm, journal = open_engine(qdir, name)
            oam = qm.state.authority
            oam.enabled = True  # a new queue manager checks who connects and what each may do
            # IBM's three default channel authentication records (engine.chlauth), checked
            # unless CHLAUTH(DISABLED) was asked for.
            oam.chlauth = ChannelAuthRecords(with_defaults(altered_stamp(*qm.state.stamp_put(qm.state.clock.now()))))
            oam.persist()
            if not chlauth:
                qm.objects.alter_qmgr({"CHLAUTH": MQCHLA_DISABLED})
            qm.take_sync_lsn()
            journal.sync()
            journal.close()
    except BaseException:
        shutil.rmtree(qdir.path, ignore_errors=True)
        raise
    return {"name": name, "host": host, "port": port, "data_dir": str(qdir.path), "created": now_iso(),
            "server": dict(server or {}), "allow_unauthenticated_remote": allow_remote,
            "log": (log or LogConfig()).as_dict(), **dirs, "warnings": _warnings(name, host, port, allow_remote)}


def _warnings(name: str, host: str, port: int, allow_remote: bool) -> list[str]:
    return [remote_warning(name, host, port)] if allow_remote and not is_loopback(host) else []


def _check_port(home: Path, name: str, host: str, port: int) -> None:
    """Refuse a port out of range, or one another queue manager of ``home`` owns (naming it)."""
    if not 0 <= port < 65536:
        raise CliError(Exit.USAGE, "port_invalid", f"port {port} is out of range (0 to 65535; 0 = any free port)")
    holder = port_owner(home, host, port, other_than=name)
    if holder is not None:
        raise CliError(Exit.PORT_IN_USE, "port_in_use", f"port {port} on {host} belongs to queue manager {holder} "
                       f"of {home}; choose another port (or --port 0 for any free one at each start)",
                       qmgr=name, holder=holder, host=host, port=port)


def exit_directories(given: dict[str, str]) -> dict[str, str]:
    """exit_path and bulk_data_dir as absolute paths ("" leaves one unset).

    Raises:
        CliError: USAGE naming the option whose directory does not exist.
    """
    out: dict[str, str] = {}
    for key, value in given.items():
        if value:
            path = Path(value).expanduser().resolve()
            if not path.is_dir():
                raise CliError(Exit.USAGE, "directory_missing", f"--{key.replace('_', '-')} {value}: no such "
                               "directory (it must exist; the queue manager never creates it)", option=key)
            value = str(path)
        out[key] = value
    return out


def alter(home: Path, name: str, host: str | None, port: int | None,
          allow_remote: bool | None = None, log: dict[str, Any] | None = None,
          exit_dirs: dict[str, str] | None = None) -> dict[str, Any]:
    """Change a stopped queue manager's address (host, port) in its config; ``allow_remote``
    (None: unchanged) accepts or refuses a host beyond loopback (``home.check_binding``);
    ``log``: the LogConfig fields to change (max_bytes, backups, format); ``exit_dirs``
    sets exit_path and/or bulk_data_dir ("" unsets one).

    Raises:
        CliError: UNKNOWN_QMGR, RUNNING, USAGE, PORT_IN_USE, DAMAGED.
    """
    qdir = QmgrDir(home, name).require()
    with _stopped(qdir):  # held while the config changes, so that no start reads half of it
        config = qdir.load_config()
        new_host = config.host if host is None else host
        new_port = config.port if port is None else port
        new_allow = config.allow_remote if allow_remote is None else allow_remote
        check_binding(name, new_host, new_allow)
        _check_port(home, name, new_host, new_port)
        new_log = dataclasses.replace(config.log, **(log or {}))
        dirs = exit_directories(exit_dirs or {})
        altered = dataclasses.replace(config, host=new_host, port=new_port, allow_remote=new_allow, log=new_log,
                                      exit_path=dirs.get("exit_path", config.exit_path),
                                      bulk_data_dir=dirs.get("bulk_data_dir", config.bulk_data_dir))
        qdir.save_config(altered)
    return {"name": name, "host": new_host, "port": new_port, "previous": {"host": config.host, "port": config.port},
            "data_dir": str(qdir.path), "allow_unauthenticated_remote": new_allow, "log": new_log.as_dict(),
            "exit_path": altered.exit_path, "bulk_data_dir": altered.bulk_data_dir,
            "warnings": _warnings(name, new_host, new_port, new_allow)}


def describe(qdir: QmgrDir) -> dict[str, Any]:
    """dspmq for one queue manager: status, pid, host, port (bound port while it runs)."""
    out: dict[str, Any] = {"name": qdir.name, "status": "", "pid": None, "host": None, "port": None,
                           "configured_port": None, "data_dir": str(qdir.path)}
    try:
        config = qdir.load_config()
        out.update(host=config.host, configured_port=config.port)
    except CliError as exc:
        out.update(status=DAMAGED, error=exc.message)
    st = qdir.read_status()
    state = st.get("state")
    if qdir.is_locked():
        pid = qdir.read_pid()
        if state in ("running", "quiescing", "ending") and st.get("pid") == pid:
            out.update(status={"running": RUNNING, "quiescing": QUIESCING, "ending": ENDING}[state],
                       pid=pid, port=st.get("port"), host=st.get("host", out["host"]), started=st.get("started"),
                       event_loop=st.get("event_loop"), metrics_port=st.get("metrics_port"),
                       console_port=st.get("console_port"), console_tls=bool(st.get("console_tls")))
            out["journal"] = qdir.read_health()
        else:
            out.update(status=STARTING, pid=pid)
        return out
    if out["status"] == DAMAGED:
        return out
    if state in ("running", "quiescing", "ending"):
        # Nobody holds the lock, yet the server never wrote its end: it died (kill -9, crash, power).
        out.update(status=ENDED_UNEXPECTEDLY, last_pid=st.get("pid"), last_port=st.get("port"),
                   started=st.get("started"))
    elif state == "ended":
        how = str(st.get("how"))
        out.update(status={"normally": ENDED_NORMALLY, "immediately": ENDED_IMMEDIATELY}.get(how, ENDED_UNEXPECTEDLY),
                   last_pid=st.get("pid"), last_port=st.get("port"), started=st.get("started"), ended=st.get("ended"))
    else:
        out.update(status=ENDED_IMMEDIATELY)  # created, never started: what dspmq shows after crtmqm
    return out


def list_all(home: Path, names: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """dspmq: every queue manager under ``home`` (or just ``names``, which must exist)."""
    if names:
        return [describe(QmgrDir(home, n).require()) for n in names]
    return [describe(QmgrDir(home, n)) for n in list_names(home)]


def start(home: Path, name: str, timeout: float, quiesce_timeout: float, event_loop: str = "auto",
          server: dict[str, Any] | None = None,
          on_progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """strmqm: launch the server detached; return once it accepts connections. ``server``:
    knobs of the server for this run, over those in its config. ``on_progress`` hears the
    server's progress reports (journal recovery, ``cli.recovery``); each one gives the
    server another ``timeout`` seconds, so a long recovery that advances never times out.

    Raises:
        CliError: UNKNOWN_QMGR, RUNNING, DAMAGED, PORT_IN_USE, START_FAILED, USAGE (a host
            beyond loopback that was not allowed, as in a config written before the rule).
    """
    qdir = QmgrDir(home, name).require()
    config = qdir.load_config()
    check_binding(name, config.host, config.allow_remote)
    info = describe(qdir)
    if info["status"] in _ACTIVE:
        raise CliError(Exit.RUNNING, "qmgr_running", f"queue manager {name} is already running "
                       f"({info['status'].lower()}, pid {info['pid']})", qmgr=name, pid=info["pid"],
                       port=info["port"])
    r, w = os.pipe()
    env = dict(os.environ, FERRYMQ_HOME=str(home))
    cmd = [sys.executable, "-m", "ferrymq.cli", "start", name, "--foreground", "--notify-fd", str(w),
           "--quiesce-timeout", str(quiesce_timeout), "--event-loop", event_loop, *server_options.as_args(server or {})]
    try:
        try:
            logf = _open_log(qdir, config.log.format)
        except CliError:
            os.close(r)
            raise
        with logf:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, cwd=qdir.path,
                                    env=env, pass_fds=(w,), start_new_session=True, close_fds=True)
    finally:
        os.close(w)
    try:
        for reply in _read_lines(r, timeout):
            if reply is None or "progress" not in reply:
                break
            if on_progress is not None:
                on_progress(reply["progress"])
    finally:
        os.close(r)
    if reply is None:
        code = proc.poll()
        if code is None:
            raise CliError(Exit.START_FAILED, "start_timeout", f"queue manager {name} did not report ready within "
                           f"{timeout:g} s (pid {proc.pid} still starting); see {qdir.log_file}",
                           qmgr=name, pid=proc.pid, log=str(qdir.log_file))
        raise CliError(Exit.START_FAILED, "start_failed", f"the server process for {name} exited with code {code} "
                       f"before it was ready; last lines of {qdir.log_file}:\n{_tail(qdir.log_file)}",
                       qmgr=name, log=str(qdir.log_file))
    if not reply.get("ok"):
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        err = reply.get("error", {})
        raise CliError(Exit(err.get("exit_code", Exit.START_FAILED)), err.get("rule", "start_failed"),
                       err.get("message", "the server failed to start"),
                       **{k: v for k, v in err.items() if k not in ("rule", "exit_code", "message")})
    port = int(reply["port"])
    _check_accepts(config.host, port, name)
    proc.returncode = 0  # detached on purpose: keeps Popen from warning that it still runs
    return {"name": name, "status": RUNNING, "pid": reply["pid"], "host": config.host, "port": port,
            "event_loop": reply.get("event_loop"), "data_dir": str(qdir.path), "log": str(qdir.log_file),
            "recovery": reply.get("recovery"),
            "warnings": reply.get("warnings", _warnings(name, config.host, port, config.allow_remote))}


def _open_log(qdir: QmgrDir, fmt: str) -> BinaryIO:
    """The server's log, opened for appending with this start's first line written (an
    event in the log's format ``fmt``, like every line after it).

    Raises:
        CliError(START_FAILED, disk_full): no space for even that line.
    """
    logf = private.append_file(qdir.log_file)  # the caller closes it once the server has it
    try:
        logf.write(logsetup.line(fmt, "ferrymq.start", "start_requested", qmgr=qdir.name, launcher_pid=os.getpid())
                   .encode() + b"\n")
        logf.flush()
    except OSError as exc:
        with contextlib.suppress(OSError):
            logf.close()
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise CliError(Exit.START_FAILED, "disk_full", f"queue manager {qdir.name}: no space left on the disk "
                           f"of {qdir.path} ({exc}); free some space and start it again", qmgr=qdir.name) from None
        raise
    return logf


def _read_lines(fd: int, timeout: float) -> Iterator[dict[str, Any] | None]:
    """The launcher's end of the notify pipe: each JSON line as it comes, then None when
    ``timeout`` seconds pass without one or the pipe ends (EOF) first."""
    buf = b""
    deadline = time.monotonic() + timeout
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                reply = json.loads(line)
            except ValueError:
                reply = None
            yield reply if isinstance(reply, dict) else None
            deadline = time.monotonic() + timeout
        left = deadline - time.monotonic()
        if left <= 0:
            yield None
            return
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            yield None
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            yield None
            return
        buf += chunk


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _check_accepts(host: str, port: int, name: str) -> None:
    """The server said it listens; make sure a client can in fact connect."""
    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    try:
        with socket.create_connection((target, port), timeout=5):
            pass
    except OSError as exc:
        raise CliError(Exit.START_FAILED, "not_accepting", f"queue manager {name} reports port {port} but "
                       f"{target}({port}) refuses connections: {exc}", qmgr=name, port=port) from None


def stop(home: Path, name: str, immediate: bool, wait: float) -> dict[str, Any]:
    """endmqm: signal the server (SIGTERM to quiesce, SIGUSR1 to end immediately) and wait
    up to ``wait`` seconds for it to end.

    Raises:
        CliError: UNKNOWN_QMGR, NOT_RUNNING, STILL_ENDING.
    """
    qdir = QmgrDir(home, name).require()
    info = describe(qdir)
    pid = info["pid"]
    if info["status"] not in _ACTIVE or not pid:
        raise CliError(Exit.NOT_RUNNING, "qmgr_not_running", f"queue manager {name} is not running "
                       f"({info['status'].lower()})", qmgr=name, status=info["status"])
    with contextlib.suppress(ProcessLookupError):  # it ended between the look and the signal
        os.kill(pid, signal.SIGUSR1 if immediate else signal.SIGTERM)
    deadline = time.monotonic() + wait
    while qdir.is_locked():
        if time.monotonic() >= deadline:
            raise CliError(Exit.STILL_ENDING, "stop_timeout", f"queue manager {name} (pid {pid}) is still ending "
                           f"after {wait:g} s; wait longer with --wait or use --immediate", qmgr=name, pid=pid)
        time.sleep(0.05)
    return describe(qdir)


def _stopped(qdir: QmgrDir) -> IO[bytes]:
    """The run lock of a queue manager that does not run, for a change no start may see half of.

    Raises:
        CliError(RUNNING): it runs.
    """
    lock = qdir.acquire_lock(patience=0.5)
    if lock is None:
        pid = qdir.read_pid()
        raise CliError(Exit.RUNNING, "qmgr_running", f"queue manager {qdir.name} is running (pid {pid}); "
                       f"stop it first: ferrymq stop {qdir.name}", qmgr=qdir.name, pid=pid)
    return lock


def delete(home: Path, name: str) -> dict[str, Any]:
    """dltmqm: remove the data directory of a queue manager that does not run.

    Raises:
        CliError: UNKNOWN_QMGR, RUNNING.
    """
    qdir = QmgrDir(home, name).require()
    with _stopped(qdir):  # held while the files go, so that no start can slip in
        shutil.rmtree(qdir.path)
    with contextlib.suppress(OSError):
        qdir.path.parent.rmdir()  # only if it was the last one
    return {"name": name, "deleted": True, "data_dir": str(qdir.path)}
