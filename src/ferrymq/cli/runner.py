"""The server process: one queue manager's engine, journal and TCP server, until a signal.

``ferrymq start QM1 --foreground`` runs this in the terminal; ``ferrymq start QM1`` runs
it detached and learns the outcome through ``--notify-fd``: one JSON line, ``{"ok": true,
"port": ...}`` once the server accepts connections, or the error that stopped it.

Signals: SIGTERM and SIGINT quiesce (endmqm -c: new connections refused, clients get
MQRC_Q_MGR_QUIESCING and ``quiesce_timeout`` seconds to leave); SIGUSR1, or a second
SIGINT, ends immediately (endmqm -i: the remaining connections are cut, their units of
work backed out). Either way the journal is flushed and closed before the process ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import pwd
import signal
import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ferrymq.channels import ChannelInitiator, EngineHost
from ferrymq.channels.exits import ExitSettings
from ferrymq.cli import logsetup, private, server_options
from ferrymq.cli.control import list_all
from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import (
    Config,
    HealthFile,
    QmgrDir,
    check_binding,
    is_loopback,
    now_iso,
    port_owner,
    remote_warning,
)
from ferrymq.cli.recovery import Recovery
from ferrymq.client import local
from ferrymq.console.app import WebConsole
from ferrymq.engine.api import SystemClock
from ferrymq.engine.paging import MemoryLimits
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import JournalFull, MQError, StoreError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.server import QueueManagerServer, chlgate, eventloop
from ferrymq.server.cmdserver import USER as CMDSERVER_USER
from ferrymq.server.connauth import Authenticator
from ferrymq.server.gc_policy import FreezeSurvivors
from ferrymq.server.tls import ServerTLS
from ferrymq.store.file import DEFAULT_RESERVE, FileJournal
from ferrymq.store.journal import Journal
from ferrymq.store.space import RECOVERABLE_ERRNOS
from ferrymq.store.users import UserRegistry

log = logging.getLogger("ferrymq.cli")

QUIESCE = "quiesce"
IMMEDIATE = "immediate"


def open_engine(qdir: QmgrDir, name: str, reserve_bytes: int = DEFAULT_RESERVE,
                limits: MemoryLimits | None = None) -> tuple[QueueManager, Journal]:
    """Open the journal and replay it into an engine (a new journal gets the system objects).
    ``reserve_bytes``: the free disk space below which persistent messages are refused;
    ``limits``: the engine's memory budgets (default: MemoryLimits()).

    Raises:
        CliError(DAMAGED): the journal cannot be opened or replayed; the StoreError is shown.
        CliError(START_FAILED, disk_full): the journal's disk has no space for it to start.
    """
    try:
        journal = FileJournal(qdir.journal_dir, reserve_bytes=reserve_bytes)
    except (StoreError, OSError) as exc:
        raise _damaged(qdir, exc) from exc
    try:
        return QueueManager.start(name, journal, SystemClock(), limits or MemoryLimits()), journal
    except BaseException as exc:
        with contextlib.suppress(Exception):
            journal.close()
        if isinstance(exc, Exception):
            log.exception("event=recovery_failed qmgr=%s", name)
            raise _damaged(qdir, exc) from exc
        raise


def _damaged(qdir: QmgrDir, exc: BaseException) -> CliError:
    kind = type(exc).__name__
    cause = exc.__cause__ if isinstance(exc, StoreError) else exc
    if isinstance(exc, JournalFull) or (isinstance(cause, OSError) and cause.errno in RECOVERABLE_ERRNOS):
        # Not damage: nothing on disk is wrong, there is only no room to start.
        return CliError(Exit.START_FAILED, "disk_full", f"queue manager {qdir.name}: the journal's disk "
                        f"({qdir.journal_dir}) has no space left: {exc}; free some space and start it again",
                        qmgr=qdir.name, error_type=kind, error=str(exc))
    return CliError(Exit.DAMAGED, "journal_damaged", f"queue manager {qdir.name}: the journal in "
                    f"{qdir.journal_dir} cannot be opened (damaged data directory): {kind}: {exc}",
                    qmgr=qdir.name, error_type=kind, error=str(exc))


class Notifier:
    """Tells the ``start`` command that launched us how starting went (once)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def progress(self, doc: dict[str, Any]) -> None:
        """A progress line before the outcome (``{"progress": doc}``); the pipe stays open."""
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.write(self.fd, (json.dumps({"progress": doc}) + "\n").encode())

    def send(self, payload: dict[str, Any]) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        with contextlib.suppress(OSError):  # the launcher may have given up waiting
            os.write(fd, (json.dumps(payload) + "\n").encode())
        with contextlib.suppress(OSError):
            os.close(fd)


class Stopper:
    """Turns signals into one stop request, possibly escalated to immediate."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self.requested = asyncio.Event()
        self.escalated = asyncio.Event()
        self.mode = ""
        self._echo = echo

    def on_signal(self, signum: int) -> None:
        wants = IMMEDIATE if signum == signal.SIGUSR1 else QUIESCE
        if not self.mode:
            self.mode = wants
            self.requested.set()
            if wants == QUIESCE:
                self._echo(f"{signal.Signals(signum).name}: quiescing (Ctrl-C again or SIGUSR1 to end immediately)")
            else:
                self._echo(f"{signal.Signals(signum).name}: ending immediately")
        elif wants == IMMEDIATE or signum == signal.SIGINT:
            if not self.escalated.is_set():
                self._echo("ending immediately")
            self.escalated.set()


def run(qdir: QmgrDir, *, notify_fd: int | None = None, quiesce_timeout: float = 30.0,
        echo: Callable[[str], None] = print, event_loop: str = "auto",
        server: dict[str, Any] | None = None) -> dict[str, Any]:
    """Serve the queue manager until stopped; returns the final status. ``server``: the
    server's knobs for this run, over those of the config (``cli.server_options``).

    Raises:
        CliError: it runs already (RUNNING), the port is taken (PORT_IN_USE), the journal is
            damaged (DAMAGED), the server cannot listen or ``event_loop`` is not available
            (START_FAILED), the config listens beyond loopback without the override (USAGE). The launcher is told through ``notify_fd`` before the error propagates.
    """
    notifier = Notifier(notify_fd)
    try:
        try:
            make_loop = eventloop.loop_factory(event_loop)
        except ValueError as exc:
            raise CliError(Exit.START_FAILED, "event_loop_unavailable", f"queue manager {qdir.name}: {exc}",
                           qmgr=qdir.name, event_loop=event_loop) from None
        config = qdir.require().load_config()
        logsetup.configure(qdir.log_file, max_bytes=config.log.max_bytes, backups=config.log.backups,
                           fmt=config.log.format, to_file=notify_fd is not None)  # detached: to ferrymq.log
        check_binding(qdir.name, config.host, config.allow_remote)
        lock = qdir.acquire_lock()
        if lock is None:
            pid = qdir.read_pid()
            raise CliError(Exit.RUNNING, "qmgr_running", f"queue manager {qdir.name} is already running"
                           + (f" (pid {pid})" if pid else ""), qmgr=qdir.name, pid=pid)
    except CliError as exc:
        notifier.send({"ok": False, "error": exc.as_dict()})
        raise
    try:
        _make_private(qdir)
        private.write_private(qdir.pid_file, f"{os.getpid()}\n")
        with asyncio.Runner(loop_factory=make_loop) as runner:
            return runner.run(_serve(qdir, config, notifier, quiesce_timeout, echo, server or {}))
    except CliError as exc:
        notifier.send({"ok": False, "error": exc.as_dict()})
        raise
    except BaseException as exc:
        notifier.send({"ok": False, "error": {"rule": "start_failed", "exit_code": int(Exit.START_FAILED),
                                              "message": f"{type(exc).__name__}: {exc}"}})
        raise
    finally:
        qdir.remove_pid()
        lock.close()


def _make_private(qdir: QmgrDir) -> None:
    """Tighten a data directory made with looser modes (before files were created private)."""
    changed = private.tighten(qdir.path)
    if changed:
        log.warning("event=data_dir_tightened qmgr=%s paths=%d path=%s detail=%s", qdir.name, len(changed),
                    qdir.path, "group and other permissions removed: directories 0700, files 0600")


def plain_channels(qm: QueueManager, tls: ServerTLS) -> str:
    """Why a client could reach this queue manager without TLS (blank: it cannot): its
    server-connection channels without SSLCIPH, or no certificate of its own."""
    if not tls.repository().has_personal(tls.label()):
        return f"no certificate labelled {tls.label()!r} in key repository {tls.repository().stem}"
    plain = sorted(c.name for c in qm.state.channels if c.chltype == "SVRCONN" and not c.text("SSLCIPH").strip())
    return f"server-connection channels without SSLCIPH: {', '.join(plain)}" if plain else ""


_WEAK_CHECKS = {F.MQCHK_NONE: "CHCKCLNT(NONE): no client password is checked",
                F.MQCHK_OPTIONAL: "CHCKCLNT(OPTIONAL): a client that gives no password is the user it names",
                F.MQCHK_REQUIRED_ADMIN: "CHCKCLNT(REQDADM): clients naming a user who is not an administrator "
                                        "give no password"}


def authentication_off(qm: QueueManager) -> str:
    """Why the queue manager checks no client password at all (blank: it checks them):
    IBM's "connection authentication off", which a listener beyond loopback may not have."""
    if not qm.state.authority.enabled:
        return "security off: no identity or authority is checked"
    if not str(qm.objects.qmgr_status("CONNAUTH")).strip():
        return "CONNAUTH blank: no client password is checked"
    if qm.state.authority.authinfo.chckclnt == F.MQCHK_NONE:
        return _WEAK_CHECKS[F.MQCHK_NONE]
    return ""


def exposure(qm: QueueManager, tls: ServerTLS) -> list[str]:
    """What lets a client from elsewhere in without a checked identity, or in clear text,
    read from the running queue manager's settings (empty: nothing)."""
    oam = qm.state.authority
    off = authentication_off(qm)
    out: list[str] = [off] if off else []
    if not off and oam.authinfo.chckclnt in _WEAK_CHECKS:
        out.append(_WEAK_CHECKS[oam.authinfo.chckclnt])
    if oam.enabled and not chlgate.enabled(qm):
        out.append("CHLAUTH(DISABLED): no channel authentication record is checked")
    tls_off = plain_channels(qm, tls)
    if tls_off:
        out.append(f"TLS OFF ({tls_off}): messages and passwords cross the network in clear text")
    return out


def security(qdir: QmgrDir, qm: QueueManager) -> Authenticator:
    """Connection authentication and the OAM's view of users: the queue manager's registry
    (store.users), whose groups the OAM reads, and its administrators: group mqm, the OS
    user running it (who owns its data directory) and its command server."""
    me = pwd.getpwuid(os.getuid()).pw_name
    registry = UserRegistry(qdir.path, creator=me)
    oam = qm.state.authority
    oam.groups_of = registry.groups_of
    oam.superusers = {me, CMDSERVER_USER}
    if oam.enabled:
        log.info("event=security qmgr=%s chckclnt=%d chcklocl=%d adoptctx=%s faildelay=%d users=%d", qdir.name,
                 oam.authinfo.chckclnt, oam.authinfo.chcklocl, oam.authinfo.adoptctx, oam.authinfo.faildelay,
                 len(registry.users))
    return Authenticator(registry, oam, lambda: str(qm.objects.qmgr_status("CONNAUTH")))


async def _serve(qdir: QmgrDir, config: Config, notifier: Notifier, quiesce_timeout: float,
                 echo: Callable[[str], None], knobs: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    stopper = Stopper(echo)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        loop.add_signal_handler(sig, stopper.on_signal, sig)
    options = {**config.server, **knobs}
    last = qdir.read_status().get("state")
    after = "crash" if last in ("running", "quiescing", "ending") else "end" if last == "ended" else "create"
    with Recovery(qdir.name, qdir.journal_dir, after, notifier.progress) as recovery:
        qm, journal = open_engine(qdir, config.name, config.disk_reserve_bytes,
                                  server_options.memory_limits(options))
    recovered = recovery.done(qm, journal)
    off = "" if is_loopback(config.host) else authentication_off(qm)
    if off:  # --allow-unauthenticated-remote accepts weak checks and clear text, never none at all
        journal.close()
        raise CliError(Exit.USAGE, "remote_bind_unauthenticated",
                       f"queue manager {qdir.name}: listening on {config.host!r}, beyond loopback, needs connection "
                       f"authentication on, and it is not ({off}); start it on loopback ('ferrymq alter "
                       f"{qdir.name} --host 127.0.0.1'), set CHCKCLNT to REQDADM, OPTIONAL or REQUIRED (ALTER AUTHINFO, "
                       "docs/security.md), then listen beyond loopback again", qmgr=qdir.name, host=config.host)
    FreezeSurvivors().install()  # after recovery, which freezes what it rebuilt
    try:
        local_socket: socket.socket | None = local.listen(qdir.socket_file)
    except OSError as exc:  # TCP still serves: applications then need an address
        log.warning("event=local_socket_unavailable path=%s error=%s", qdir.socket_file, exc)
        local_socket = None
    tls = ServerTLS(qm, qdir.path, server_options.ocsp_policy(options))
    server = QueueManagerServer(qm, config.host, config.port, local_socket=local_socket,
                                authenticator=security(qdir, qm), tls=tls,
                                **server_options.server_keywords(options))
    try:
        await server.start()
    except OSError as exc:
        await server.stop(quiesce=False)
        with contextlib.suppress(OSError):
            qdir.socket_file.unlink()
        journal.close()
        if exc.errno == errno.EADDRINUSE:
            home = qdir.path.parent.parent
            holder = port_owner(home, config.host, config.port, other_than=qdir.name)
            who = f"queue manager {holder}" if holder else "another process"
            raise CliError(Exit.PORT_IN_USE, "port_in_use", f"queue manager {qdir.name}: port {config.port} on "
                           f"{config.host} is in use by {who}; choose another with 'ferrymq alter {qdir.name} "
                           f"--port N' (0: any free port at each start), or free it", qmgr=qdir.name,
                           host=config.host, port=config.port, holder=holder) from None
        raise CliError(Exit.START_FAILED, "listen_failed", f"queue manager {qdir.name}: cannot listen on "
                       f"{config.host}({config.port}): {exc}", qmgr=qdir.name, host=config.host,
                       port=config.port) from None
    exits = ExitSettings(qdir.name, Path(config.exit_path) if config.exit_path else None,
                         Path(config.bulk_data_dir) if config.bulk_data_dir else None)
    channels = ChannelInitiator(EngineHost(qm, server.committer.after, server.agent_done, keys=server.tls,
                                           listen=server.listener_for, wait=server.agent_wait),
                                default_host=config.host,
                                may_listen=lambda host: config.allow_remote or is_loopback(host), exit_settings=exits,
                                clients=server.stop_channel,
                                **server_options.channel_keywords(options))
    await channels.start()
    status_doc: dict[str, Any] = {}  # the console's status page reads it: filled in below
    console = await _start_console(qdir, server, channels, journal, status_doc, options.get("console_port"),
                                   bool(options.get("console_tls")))
    pid = os.getpid()
    running = {"state": "running", "name": qdir.name, "pid": pid, "host": config.host, "port": server.port,
               "started": now_iso(), "event_loop": eventloop.loop_name(loop),
               "metrics_port": server.metrics.port if server.metrics is not None else None,
               "console_port": console.port if console is not None else None,
               "console_tls": console is not None and console.tls}
    status_doc.update(running)
    qdir.write_status(**running)
    health = _report_health(qdir, server)
    log.info("event=qmgr_started qmgr=%s pid=%d host=%s port=%d event_loop=%s", qdir.name, pid, config.host,
             server.port, running["event_loop"])
    echo(f"queue manager {qdir.name} running on {config.host}({server.port}), pid {pid}")
    warnings: list[str] = []
    if not is_loopback(config.host):  # allowed (check_binding): said on every start, in the log too
        open_to = exposure(qm, tls)
        line = remote_warning(qdir.name, config.host, server.port, open_to)
        if open_to:
            log.warning("event=unauthenticated_remote_listener qmgr=%s host=%s port=%d tls=%s %s", qdir.name,
                        config.host, server.port, "off" if plain_channels(qm, tls) else "required", line)
            warnings.append(line)
        else:
            log.info("event=remote_listener qmgr=%s host=%s port=%d passwords=required tls=required", qdir.name,
                     config.host, server.port)
        echo(line)
    notifier.send({"ok": True, **running, "recovery": recovered, "warnings": warnings})

    await stopper.requested.wait()
    if console is not None:
        await console.stop()
    await channels.stop()
    how = await _stop(qdir, server, stopper, running, quiesce_timeout)
    with contextlib.suppress(OSError):
        qdir.socket_file.unlink()
    if health is not None:
        health.close()
    try:
        journal.close()
    except Exception:
        log.exception("event=journal_close_failed qmgr=%s", qdir.name)
        how = "unexpectedly"
    ended = {**running, "state": "ended", "how": how, "ended": now_iso()}
    qdir.write_status(**ended)
    log.info("event=qmgr_ended qmgr=%s how=%s", qdir.name, how)
    echo(f"queue manager {qdir.name} ended {how}")
    return ended


async def _start_console(qdir: QmgrDir, server: QueueManagerServer, channels: ChannelInitiator, journal: Journal,
                         status: dict[str, Any], port: int | None, tls: bool = False) -> WebConsole | None:
    """The web console when a port is given (ferrymq.console), over HTTPS with ``tls``; a
    port it cannot listen on, or a key repository without the queue manager's certificate,
    ends the start, as the metrics endpoint's does."""
    if port is None:
        return None
    assert server.authenticator is not None  # _serve always gives one

    async def failed(code: str, why: str) -> CliError:
        await channels.stop()
        await server.stop(quiesce=False)
        with contextlib.suppress(OSError):
            qdir.socket_file.unlink()
        journal.close()
        return CliError(Exit.START_FAILED, code, f"queue manager {qdir.name}: {why}", qmgr=qdir.name,
                        host="127.0.0.1", port=port)

    context = None
    if tls:
        try:
            context = console_tls_context(server)
        except MQError as exc:
            raise await failed("console_tls_failed", f"cannot serve the web console over TLS: {exc.detail or exc}") \
                from None
    console = WebConsole(server, server.authenticator.registry, status,
                         neighbours=lambda: [row for row in list_all(qdir.path.parent.parent) if row["name"] != qdir.name])
    try:
        await console.start(port, context)
    except OSError as exc:
        raise await failed("listen_failed", f"cannot serve the web console on 127.0.0.1({port}): {exc}") from None
    return console


def console_tls_context(server: QueueManagerServer) -> ssl.SSLContext:
    """The web console's HTTPS context: the queue manager's certificate (CERTLABL) from its
    key repository (SSLKEYR), as its listener presents it, but asking a browser for no
    certificate (sign-in is by user and password).

    Raises:
        MQError: 2381/2393: no key repository, or no certificate of that label in it.
    """
    if server.tls is None:
        raise MQError(C.MQCC_FAILED, C.MQRC_KEY_REPOSITORY_ERROR, "this queue manager has no key repository")
    context = server.tls.repository().server_context(server.tls.label())
    context.verify_mode = ssl.CERT_NONE
    return context


def _report_health(qdir: QmgrDir, server: QueueManagerServer) -> HealthFile | None:
    """Keep health.json up to date with the journal's state (``ferrymq list`` shows it)."""
    try:
        health = HealthFile(qdir.health_file)
    except OSError as exc:  # a disk already full at start: the log still says it
        log.warning("event=health_file_unavailable path=%s error=%s", qdir.health_file, exc)
        return None

    def report(doc: dict[str, Any]) -> None:
        try:
            health.write(doc)
        except OSError as exc:
            log.warning("event=health_file_write_failed error=%s", exc)

    report(server.committer.health())
    server.committer.on_health = report
    return health


async def _stop(qdir: QmgrDir, server: QueueManagerServer, stopper: Stopper, running: dict[str, Any],
                quiesce_timeout: float) -> str:
    if stopper.mode == IMMEDIATE:
        qdir.write_status(**{**running, "state": "ending"})
        await server.stop(quiesce=False)
        return "immediately"
    qdir.write_status(**{**running, "state": "quiescing"})
    t0 = time.monotonic()
    quiesce = asyncio.create_task(server.stop(quiesce=True, timeout=quiesce_timeout))
    escalate = asyncio.create_task(stopper.escalated.wait())
    done, _ = await asyncio.wait({quiesce, escalate}, return_when=asyncio.FIRST_COMPLETED)
    how = "normally"
    if escalate in done and not quiesce.done():
        # The quiesce loop ends once no handler is left: cutting them is what endmqm -i does.
        how = "immediately"
        for h in list(server.handlers):
            h.end(C.MQRC_Q_MGR_STOPPING, "the queue manager is ending immediately")
    escalate.cancel()
    await quiesce
    log.info("event=server_stopped_after qmgr=%s seconds=%.3f", qdir.name, time.monotonic() - t0)
    return how
