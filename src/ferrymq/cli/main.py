"""The ``ferrymq`` command: click front end over ``control`` (what to do) and ``runner``.

Every command takes ``--output json`` (also accepted before the command): one JSON
document on stdout, ``{"ok": true, ...}`` or ``{"ok": false, "error": {"rule", "exit_code",
"message", ...}}``. Errors in text mode go to stderr as ``ferrymq: error[rule]: message``.
The exit code names the rule too (see ``errors.Exit`` and docs/cli.md).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from ferrymq import __version__
from ferrymq.cli import control, logsetup, server_options
from ferrymq.cli.authority import register as register_authority
from ferrymq.cli.backup import register as register_backup
from ferrymq.cli.bench import register as register_bench
from ferrymq.cli.dump import register as register_dump
from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import ALLOW_REMOTE_FLAG, DEFAULT_HOST, DEFAULT_PORT, LogConfig, QmgrDir
from ferrymq.cli.mqsc import register as register_mqsc
from ferrymq.cli.status import register as register_status
from ferrymq.cli.tls import register as register_tls
from ferrymq.cli.trigmon import register as register_trigger_monitor
from ferrymq.cli.users import register as register_users
from ferrymq.client.local import home_dir

F = TypeVar("F", bound=Callable[..., Any])

_STATUS_STYLE = {control.RUNNING: "green", control.ENDED_UNEXPECTEDLY: "red", control.DAMAGED: "red",
                 control.QUIESCING: "yellow", control.ENDING: "yellow", control.STARTING: "yellow"}


class Out:
    """Where a command's result and errors go, in text or JSON."""

    def __init__(self, fmt: str) -> None:
        self.json = fmt == "json"
        self.console = Console(highlight=False, soft_wrap=True)

    def result(self, data: dict[str, Any] | list[dict[str, Any]], text: str | Table | None) -> None:
        if self.json:
            payload: dict[str, Any] = {"ok": True}
            payload.update({"queue_managers": data} if isinstance(data, list) else data)
            click.echo(json.dumps(payload, indent=2))
        elif text is not None:
            self.console.print(text)

    def error(self, exc: CliError) -> None:
        if self.json:
            click.echo(json.dumps({"ok": False, "error": exc.as_dict()}, indent=2))
        else:
            click.echo(f"ferrymq: error[{exc.rule}]: {exc.message}", err=True)


def output_option(fn: F) -> F:
    return click.option("--output", "-o", "output", type=click.Choice(["text", "json"]), default=None,
                        help="text (default) or json, for scripts.")(fn)


def home_option(fn: F) -> F:
    """``--home`` after the command too (``ferrymq list --home DIR``), over the one before it."""
    return click.option("--home", "home_here", type=click.Path(file_okay=False), default=None,
                        help="Where queue managers live (as --home before the command).")(fn)


def home_of(ctx: click.Context, given: str | None) -> Path:
    return home_dir(given) if given else Path(ctx.obj["home"])


def command(fn: F) -> F:
    """Give a command ``--output`` and ``--home`` and turn CliError into its message and exit code."""

    def wrapper(ctx: click.Context, /, *args: Any, output: str | None, home_here: str | None, **kwargs: Any) -> None:
        out = Out(output or ctx.obj.get("output") or "text")
        try:
            fn(home_of(ctx, home_here), out, *args, **kwargs)
        except CliError as exc:
            out.error(exc)
            ctx.exit(int(exc.code))

    functools.update_wrapper(wrapper, fn)  # click takes the command's name and help from fn
    return home_option(output_option(click.pass_context(wrapper)))  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", envvar="FERRYMQ_HOME", type=click.Path(file_okay=False), default=None,
              help="Where queue managers live (default $FERRYMQ_HOME, else ~/.ferrymq).")
@output_option
@click.version_option(__version__, prog_name="ferrymq")
@click.pass_context
def cli(ctx: click.Context, home: str | None, output: str | None) -> None:
    """Control ferrymq queue managers: create, start, stop, list, delete.

    \b
      ferrymq create QM1 --port 0     # a queue manager on any free port
      ferrymq start QM1               # runs in the background, prints its port
      ferrymq list                    # status, pid and port of each
      ferrymq mqsc QM1 < setup.mqsc   # MQSC commands (like runmqsc)
      ferrymq user add QM1 app        # a user for client connections
      ferrymq setmqaut QM1 -t qmgr -p app +connect   # what it may do
      ferrymq stop QM1                # quiesce and end
      ferrymq alter QM1 --port 1415   # a stopped one's port or --host
      ferrymq dump QM1 -q Q1 -f q1.dump   # a queue's messages to a file (load: back)
      ferrymq backup QM1 -f qm1.tar   # a stopped one, whole (restore: back)
      ferrymq bench                   # beside RabbitMQ, NATS, Mosquitto
      ferrymq delete QM1
    """
    ctx.ensure_object(dict)
    ctx.obj["home"] = home_dir(home)
    ctx.obj["output"] = output


def _log_options(fn: F) -> F:
    """--log-max-bytes, --log-backups, --log-format: how the server writes ferrymq.log."""
    fn = click.option("--log-format", type=click.Choice(logsetup.FORMATS), default=None,
                      help="ferrymq.log's lines: text (key=value, the default) or json (one object a line).")(fn)
    fn = click.option("--log-backups", type=click.IntRange(0, logsetup.MAX_BACKUPS), default=None,
                      help=f"Rotated logs kept: ferrymq.log.1 ... (default {logsetup.DEFAULT_BACKUPS}).")(fn)
    return click.option("--log-max-bytes", type=click.IntRange(logsetup.MIN_MAX_BYTES), default=None,
                        help=f"Rotate ferrymq.log when it would pass this size (default "
                             f"{logsetup.DEFAULT_MAX_BYTES:,}).")(fn)


def _log_changes(max_bytes: int | None, backups: int | None, fmt: str | None) -> dict[str, Any]:
    given = {"max_bytes": max_bytes, "backups": backups, "format": fmt}
    return {k: v for k, v in given.items() if v is not None}


def _allow_remote_option(default: bool | None) -> Callable[[F], F]:
    return click.option(ALLOW_REMOTE_FLAG + "/--loopback-only", "allow_remote", default=default,
                         help="Accept a --host beyond loopback although ferrymq has no authentication and no "
                              "TLS yet: anyone who reaches the port can act as any user. Warned about on "
                              "every start (docs/security.md).")


def _exit_dir_options(fn: F) -> F:
    fn = click.option("--bulk-data-dir", default=None, metavar="DIR",
                      help="Directory the reference-message exits read bulk data from and write it to "
                           "(docs/distributed.md); '' unsets it.")(fn)
    return click.option("--exit-path", default=None, metavar="DIR",
                        help="IBM's ExitPath: the only directory channel exits other than ferrymq's own load "
                             "from (docs/distributed.md); '' unsets it.")(fn)


def _exit_dirs(exit_path: str | None, bulk_data_dir: str | None) -> dict[str, str]:
    return {k: v for k, v in (("exit_path", exit_path), ("bulk_data_dir", bulk_data_dir)) if v is not None}


def _warn(info: dict[str, Any]) -> None:
    """Security warnings on stderr, in text and JSON modes alike (JSON also carries them)."""
    for line in info.get("warnings", ()):
        click.echo(f"ferrymq: {line}", err=True)


@cli.command()
@click.argument("name")
@click.option("--port", "-p", type=int, default=DEFAULT_PORT, show_default=True,
              help="TCP port to listen on; 0 picks a free one at each start.")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on. Beyond loopback (e.g. 0.0.0.0) needs " + ALLOW_REMOTE_FLAG + ".")
@_allow_remote_option(default=False)
@click.option("--chlauth", "chlauth", type=click.Choice(["enabled", "disabled"]), default="enabled", show_default=True,
              help="The queue manager's CHLAUTH attribute from the start (ALTER QMGR CHLAUTH): whether IBM's default "
                   "channel authentication records, made either way, are checked (docs/security.md).")
@_log_options
@_exit_dir_options
@server_options.click_options
@command
def create(home: Path, out: Out, name: str, port: int, host: str, allow_remote: bool, chlauth: str,
           log_max_bytes: int | None, log_backups: int | None, log_format: str | None, exit_path: str | None,
           bulk_data_dir: str | None, **knobs: Any) -> None:
    """Create queue manager NAME (like crtmqm): its data directory, config and journal.
    The server's limits given here are kept in its config (docs/limits.md)."""
    log = LogConfig(**_log_changes(log_max_bytes, log_backups, log_format))
    info = control.create(home, name, host, port, _knobs(knobs), allow_remote, log,
                          _exit_dirs(exit_path, bulk_data_dir), chlauth=chlauth == "enabled")
    _warn(info)
    port_text = "any free port" if port == 0 else f"port {port}"
    out.result(info, f"Queue manager {name} created in {info['data_dir']} ({host}, {port_text}).\n"
                     f"Start it with: ferrymq start {name}")


@cli.command()
@click.argument("name")
@click.option("--port", "-p", type=int, default=None, help="New TCP port; 0 picks a free one at each start.")
@click.option("--host", default=None,
              help="New address to listen on. Beyond loopback (e.g. 0.0.0.0) needs " + ALLOW_REMOTE_FLAG + ".")
@_allow_remote_option(default=None)
@_log_options
@_exit_dir_options
@command
def alter(home: Path, out: Out, name: str, port: int | None, host: str | None, allow_remote: bool | None,
          log_max_bytes: int | None, log_backups: int | None, log_format: str | None, exit_path: str | None,
          bulk_data_dir: str | None) -> None:
    """Change stopped queue manager NAME's port or address (its listener, as ALTER LISTENER
    does in IBM MQ), its log's rotation and format, or its exit directories. Refused while
    it runs, or for a port another queue manager owns."""
    log = _log_changes(log_max_bytes, log_backups, log_format)
    dirs = _exit_dirs(exit_path, bulk_data_dir)
    if port is None and host is None and allow_remote is None and not log and not dirs:
        raise CliError(Exit.USAGE, "option_missing", f"give --port, --host, {ALLOW_REMOTE_FLAG}, --log-max-bytes, "
                       "--log-backups, --log-format, --exit-path, --bulk-data-dir or a mix")
    info = control.alter(home, name, host, port, allow_remote, log, dirs)
    _warn(info)
    port_text = "any free port" if info["port"] == 0 else f"port {info['port']}"
    lg = info["log"]
    out.result(info, f"Queue manager {name} will listen on {info['host']}, {port_text}, from its next start; "
                     f"its log: {lg['format']}, rotated at {lg['max_bytes']:,} bytes, {lg['backups']} kept.")


@cli.command()
@click.argument("name")
@click.option("--foreground", "-f", is_flag=True, help="Stay attached; Ctrl-C quiesces (twice: immediate).")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="Seconds to wait for the server to accept connections.")
@click.option("--quiesce-timeout", type=float, default=30.0, show_default=True,
              help="On a quiesce stop, seconds clients get to disconnect before they are cut.")
@click.option("--event-loop", type=click.Choice(["auto", "uvloop", "asyncio"]), default="auto", show_default=True,
              help="The server's asyncio event loop: auto is uvloop when installed, else the standard loop.")
@click.option("--notify-fd", type=int, default=None, hidden=True)
@server_options.click_options
@command
def start(home: Path, out: Out, name: str, foreground: bool, timeout: float, quiesce_timeout: float,
          event_loop: str, notify_fd: int | None, **knobs: Any) -> None:
    """Start queue manager NAME (like strmqm); returns once it accepts connections.
    The server's limits given here apply to this run, over those of its config."""
    server = _knobs(knobs)
    if foreground:
        _run_foreground(home, out, name, notify_fd, quiesce_timeout, event_loop, server)
        return
    info = control.start(home, name, timeout, quiesce_timeout, event_loop, server,
                         on_progress=None if out.json else _show_progress)
    _warn(info)
    out.result(info, f"Queue manager {name} started: listening on {info['host']}({info['port']}), "
                     f"pid {info['pid']}, event loop {info['event_loop']}.\nLog: {info['log']}")


def _show_progress(doc: dict[str, Any]) -> None:
    """The server's recovery reports, as lines on stderr (stdout keeps the result)."""
    size = f"{doc.get('journal_bytes', 0) / 1e6:,.1f} MB"
    if doc.get("phase") == "recovering":
        if doc.get("seconds", 0) >= 1:  # the first report comes at once: silent for a quick start
            click.echo(f"recovering the journal ({size}): {doc['seconds']:.0f} s ...", err=True)
        return
    if doc.get("phase") == "recovered" and (doc.get("after") == "crash" or doc.get("seconds", 0) >= 1):
        crash = " after a crash" if doc.get("after") == "crash" else ""
        click.echo(f"recovered{crash}: {doc.get('messages', 0):,} messages, {doc.get('records', 0):,} journal "
                   f"records, {doc.get('in_doubt', 0)} in-doubt units of work ({size}, {doc.get('seconds', 0):.1f} s)",
                   err=True)


def _knobs(values: dict[str, Any]) -> dict[str, Any]:
    try:
        return server_options.given(values)
    except ValueError as exc:
        raise CliError(Exit.USAGE, "option_invalid", str(exc)) from None


def _run_foreground(home: Path, out: Out, name: str, notify_fd: int | None, quiesce_timeout: float,
                    event_loop: str, server: dict[str, Any]) -> None:
    from ferrymq.cli import private, runner  # the server stack is only needed here

    private.restrict_umask()  # the server process: whatever it creates is its user's alone

    # Until its config is read (runner.run sets the log up from it), errors go to stderr.
    logsetup.configure(QmgrDir(home, name).log_file, to_file=False)
    # Detached, stdout is the log: what echo would say there, the log's events say already.
    quiet = out.json or notify_fd is not None
    echo: Callable[[str], None] = (lambda _s: None) if quiet else (lambda s: click.echo(s))
    ended = runner.run(QmgrDir(home, name), notify_fd=notify_fd, quiesce_timeout=quiesce_timeout, echo=echo,
                       event_loop=event_loop, server=server)
    out.result(ended, None)


@cli.command()
@click.argument("name")
@click.option("--immediate", "-i", is_flag=True, help="End now: cut connections, back out their units of work.")
@click.option("--wait", "-w", type=float, default=60.0, show_default=True,
              help="Seconds to wait for the queue manager to end.")
@command
def stop(home: Path, out: Out, name: str, immediate: bool, wait: float) -> None:
    """Stop queue manager NAME (like endmqm): quiesce by default, or --immediate."""
    info = control.stop(home, name, immediate, wait)
    out.result(info, f"Queue manager {name} {info['status'].lower()}.")


@cli.command(name="list")
@click.argument("names", nargs=-1)
@command
def list_(home: Path, out: Out, names: tuple[str, ...]) -> None:
    """List queue managers (like dspmq): status, pid, port."""
    rows = control.list_all(home, names)
    if not rows:
        out.result(rows, f"No queue managers in {home}. Create one with: ferrymq create QM1")
        return
    table = Table(box=None, pad_edge=False)
    for col in ("NAME", "STATUS", "PID", "HOST", "PORT", "JOURNAL"):
        table.add_column(col)
    for r in rows:
        status = r["status"]
        style = _STATUS_STYLE.get(status, "")
        port = r["port"] if r["port"] is not None else (
            "any" if r["configured_port"] == 0 else r["configured_port"])
        table.add_row(r["name"], f"[{style}]{status}[/]" if style else status, str(r["pid"] or "-"),
                      str(r["host"] or "-"), str(port if port is not None else "-"), _journal_cell(r.get("journal")))
    out.result(rows, table)


_JOURNAL_WORDS = {"healthy": "healthy", "low_space": "low space", "disk_full": "disk full", "failed": "failed"}


def _journal_cell(health: dict[str, Any] | None) -> str:
    """The JOURNAL column: the running server's journal state, and since when if not healthy."""
    if not health:
        return "-"
    state = str(health.get("state", "?"))
    word = _JOURNAL_WORDS.get(state, state)
    if state == "healthy":
        return word
    since = str(health.get("since", "?"))  # ISO 8601 in UTC: the time of day is enough here
    return f"[red]{word} since {since[11:19] + ' UTC' if len(since) >= 19 else since}[/]"


@cli.command()
@click.argument("name")
@command
def delete(home: Path, out: Out, name: str) -> None:
    """Delete queue manager NAME and all its messages (like dltmqm); it must not be running."""
    info = control.delete(home, name)
    out.result(info, f"Queue manager {name} deleted ({info['data_dir']}).")


register_mqsc(cli, home_of, home_option)
register_trigger_monitor(cli, home_of, home_option)
register_status(cli, command)
register_users(cli, command)
register_dump(cli, command)
register_backup(cli, command)
register_tls(cli, command)
register_authority(cli, home_of, home_option)
register_bench(cli)


def main() -> None:
    """The ``ferrymq`` console script."""
    try:
        cli.main(prog_name="ferrymq", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C outside the server's own handler
        sys.exit(130)


if __name__ == "__main__":
    main()
