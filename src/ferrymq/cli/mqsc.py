"""``ferrymq mqsc QM1``: runmqsc for ferrymq.

Commands come from a file (``--file``), from standard input when it is not a terminal
(``ferrymq mqsc QM1 < setup.mqsc``), or from the terminal with a prompt, history
(~/.ferrymq_mqsc_history, 0600) and Tab completion of verbs, object types and attribute names.
They are sent as PCF to the queue manager's command server over a client connection,
exactly as ``runmqsc -c`` does. Exit codes are runmqsc's: 0 every command processed,
10 some had a syntax error or could not be processed, 20 the queue manager could not be
reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import click

from ferrymq.admin.mqsc import OPERATORS, TYPES, VERBS
from ferrymq.admin.pcfclient import CommandClient
from ferrymq.admin.session import EXIT_NO_QMGR, Result, Session
from ferrymq.cli import control, private
from ferrymq.cli.errors import CliError
from ferrymq.cli.home import QmgrDir
from ferrymq.client import local
from ferrymq.client.connname import MalformedConnName
from ferrymq.client.sync import Client, connect
from ferrymq.engine import attrs as A
from ferrymq.errors import MQError

HISTORY = Path.home() / ".ferrymq_mqsc_history"


def words() -> list[str]:
    """Everything Tab completes: verbs, object types, attribute names, operators."""
    names = {a.name for a in A.QUEUE_ATTRS + A.QUEUE_STATUS_ATTRS + A.QMGR_ATTRS + A.QSTATUS_ATTRS + A.TOPIC_ATTRS
             + A.TOPIC_STATUS_ATTRS + A.TPSTATUS_ATTRS + A.SUB_ATTRS + A.SUB_STATUS_ATTRS + A.PROCESS_ATTRS}
    extra = {"ALL", "WHERE", "TYPE", "LIKE", "REPLACE", "NOREPLACE", "PURGE", "NOPURGE", "HANDLE", "CLRTYPE",
             "RETAINED", "SCOPE"}
    return sorted(set(VERBS) | set(TYPES) | names | extra | set(OPERATORS))


def conn_name(home: Path, name: str, explicit: str | None) -> str:
    if explicit:
        return explicit
    info = control.describe(QmgrDir(home, name).require())
    if info["status"] != control.RUNNING:
        raise click.ClickException(f"AMQ8146E: queue manager {name} is not available (status {info['status']}); "
                                   f"start it with: ferrymq start {name}")
    host = info["host"] if info["host"] not in (None, "0.0.0.0", "::") else "127.0.0.1"
    return f"{host}({info['port']})"


def control_client(home: Path, name: str, explicit_conn: str | None, appl_name: str,
                   max_msg_length: int = 4 * 1024 * 1024) -> Client:
    """The connection of a control command (mqsc, trigger-monitor, dump): to ``explicit_conn``
    over TCP when given, else, as IBM's control commands in bindings mode, through the
    queue manager's local socket as the OS user running it, an administrator of the queue
    managers it created (docs/security.md).

    Raises:
        click.ClickException: the queue manager is not running; MQError, OSError: refused.
    """
    address = conn_name(home, name, explicit_conn)
    if explicit_conn is None and local.socket_path(name, home).exists():
        return Client(local.dial(name, 10.0, home), qmgr=name, appl_name=appl_name, max_msg_length=max_msg_length)
    return connect(name, address, appl_name=appl_name, max_msg_length=max_msg_length)


def _terminal_lines(prompt: str) -> Iterator[str]:
    import readline  # only for an interactive terminal

    vocabulary = words()

    def complete(text: str, state: int) -> str | None:
        hits = [w + " " for w in vocabulary if w.startswith(text.upper())]
        return hits[state] if state < len(hits) else None

    readline.set_completer(complete)
    readline.set_completer_delims(" ()")
    readline.parse_and_bind("tab: complete")
    with contextlib.suppress(OSError):
        readline.read_history_file(HISTORY)
    try:
        while True:
            try:
                yield input(prompt)
            except EOFError:
                click.echo()
                return
    finally:
        save_history(HISTORY)


def save_history(path: Path) -> None:
    """Write readline's history to ``path``, readable by this user only (0600): commands typed
    may name things others should not read. A failure to write it is not the user's problem."""
    import readline

    with contextlib.suppress(OSError):
        os.close(private.open_private(path, os.O_WRONLY | os.O_CREAT))  # made 0600 before readline writes it
        os.chmod(path, private.FILE_MODE)  # one written by an older ferrymq
        readline.write_history_file(path)


def _print(result: Result, echo_command: bool) -> None:
    if echo_command:
        click.echo(f"{result.number:>6} : {result.command}")
    for line in result.messages:
        click.echo(line)


def run(home: Path, name: str, source: IO[str] | None, explicit_conn: str | None, as_json: bool,
        fail: Callable[[int, str, str], None]) -> int:
    """Run a session; returns the exit code."""
    try:
        client = control_client(home, name, explicit_conn, "ferrymq mqsc")
    except click.ClickException as exc:
        fail(EXIT_NO_QMGR, "qmgr_not_available", exc.message)
        return EXIT_NO_QMGR
    except CliError as exc:  # no such queue manager, or not a valid name: runmqsc says 20 too
        fail(EXIT_NO_QMGR, exc.rule, f"AMQ8118E: {exc.message}")
        return EXIT_NO_QMGR
    except MalformedConnName as exc:
        fail(EXIT_NO_QMGR, "conn_name_malformed", f"{exc.detail}; {exc.reason_name} ({exc.reason})")
        return EXIT_NO_QMGR
    except MQError as exc:
        fail(EXIT_NO_QMGR, "qmgr_not_available", f"AMQ8146E: queue manager {name} is not available: {exc}")
        return EXIT_NO_QMGR
    except OSError as exc:  # its local socket is there but nobody answers on it
        fail(EXIT_NO_QMGR, "qmgr_not_available", f"AMQ8146E: queue manager {name} is not available: {exc}")
        return EXIT_NO_QMGR
    try:
        admin = CommandClient(client)
        session = Session(admin.run)
        interactive = source is None and sys.stdin.isatty() and not as_json
        results: list[dict[str, Any]] = []
        if not as_json:
            click.echo(f"Starting MQSC for queue manager {name}.\n")
        lines = _terminal_lines(f"{name}> ") if interactive else (source or sys.stdin)
        for result in session.script(lines):
            if as_json:
                results.append(result.as_dict())
            else:
                _print(result, not interactive)
                click.echo()
        if as_json:
            click.echo(json.dumps({"ok": session.exit_code == 0, "queue_manager": name, "commands": results,
                                   "read": session.read, "syntax_errors": session.syntax_errors,
                                   "failed": session.failed, "exit_code": session.exit_code}, indent=2))
        else:
            for line in session.summary():
                click.echo(line)
        admin.close()
        return session.exit_code
    finally:
        client.disconnect()


def register(group: click.Group, home_of: Callable[[click.Context, str | None], Path],
             home_option: Callable[[Any], Any]) -> None:
    """Add ``mqsc`` to the ``ferrymq`` command group (``home_of(ctx, --home after the
    command)``: where queue managers live)."""

    @group.command(name="mqsc")
    @home_option
    @click.argument("name")
    @click.option("--file", "-f", "file", type=click.File("r"), default=None,
                  help="Read commands from this file instead of standard input.")
    @click.option("--conn", "-c", "conn", default=None,
                  help="Connect to host(port) instead of the local queue manager's address.")
    @click.option("--output", "-o", "output", type=click.Choice(["text", "json"]), default=None,
                  help="text (runmqsc style, default) or json, for scripts.")
    @click.pass_context
    def mqsc(ctx: click.Context, name: str, file: IO[str] | None, conn: str | None, output: str | None,
             home_here: str | None) -> None:
        """Run MQSC commands against queue manager NAME (like runmqsc).

        \b
          ferrymq mqsc QM1                    # interactive: prompt, history, Tab completion
          ferrymq mqsc QM1 < setup.mqsc       # a script; exit code 0, 10 or 20
          echo "DISPLAY QSTATUS(APP.*)" | ferrymq mqsc QM1 --output json
        """
        as_json = (output or ctx.obj.get("output")) == "json"

        def fail(code: int, rule: str, message: str) -> None:
            if as_json:
                click.echo(json.dumps({"ok": False, "error": {"rule": rule, "exit_code": code,
                                                              "message": message}}, indent=2))
            else:
                click.echo(f"ferrymq: error[{rule}]: {message}", err=True)

        code = run(home_of(ctx, home_here), name, file, conn, as_json, fail)
        ctx.exit(code)
