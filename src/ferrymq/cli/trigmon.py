"""``ferrymq trigger-monitor QM1 --initq Q``: runmqtrm for ferrymq.

It keeps the initiation queue open for input (so the queue manager makes trigger messages
for the queues that name it, engine.triggering), gets each trigger message (an MQTM,
wire.mqtm) and starts the program its process names, as runmqtrm does on Linux:

    APPLICID, split into words      the program and its own arguments
    the MQTMC2 (732 characters)     one argument: the trigger message in character form
    ENVRDATA, split into words      further arguments; a trailing ``&`` starts the program
                                    in the background instead of waiting for it

Unlike runmqtrm, nothing is handed to a shell: APPLICID and ENVRDATA are split with shell
quoting rules (shlex) and the program runs directly, so text from a queue never becomes a
shell command. The program inherits this process's environment (FERRYMQ_HOME: it reaches the
same queue manager in bindings mode).

A message that is not a trigger message (format, length) or names an application type
other than UNIX/DEF/user-defined is reported and skipped. Exit codes are runmqtrm's:
0 the queue manager is ending, 10 interrupted by an error, 20 could not start.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ferrymq.cli.mqsc import control_client
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.client.sync import Client
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqtm import FORMAT, MQTM

log = logging.getLogger("ferrymq.trigmon")

EXIT_ENDING, EXIT_INTERRUPTED, EXIT_NOT_RUN = 0, 10, 20
DEFAULT_INITQ = "SYSTEM.DEFAULT.INITIATION.QUEUE"
_RUNNABLE = {C.MQAT_UNIX, C.MQAT_DEFAULT}  # and MQAT_USER_FIRST..MQAT_USER_LAST
_ENDING = {C.MQRC_Q_MGR_QUIESCING, C.MQRC_Q_MGR_STOPPING, C.MQRC_CONNECTION_QUIESCING, C.MQRC_CONNECTION_BROKEN}


@dataclass(frozen=True, slots=True)
class Start:
    """What to start for one trigger message: the argument vector, and whether to wait."""

    argv: list[str]
    background: bool


def command_for(tm: MQTM, qmgr: str) -> Start:
    """The program a trigger message names, with its arguments (see the module docstring).

    Raises:
        ValueError: an empty APPLICID, unbalanced quotes, or an application type this
            monitor does not start.
    """
    if tm.appl_type not in _RUNNABLE and not C.MQAT_USER_FIRST <= tm.appl_type <= C.MQAT_USER_LAST:
        raise ValueError(f"ApplType {tm.appl_type} is not one a UNIX trigger monitor starts")
    program = shlex.split(tm.appl_id)
    if not program:
        raise ValueError(f"process {tm.process_name!r} has a blank APPLICID")
    env = tm.env_data.strip()
    background = env.endswith("&")
    extra = shlex.split(env.removesuffix("&"))
    return Start([*program, tm.character_form(qmgr).decode("latin-1"), *extra], background)


def read_trigger_message(fmt: str, data: bytes) -> MQTM:
    """The MQTM in a message got from the initiation queue.

    Raises:
        ValueError: not in the MQTRIG format, or not an MQTM's length and layout.
    """
    if fmt.rstrip() != FORMAT:
        raise ValueError(f"format {fmt.rstrip()!r} is not {FORMAT}")
    if len(data) != C.MQTM_LENGTH_1:
        raise ValueError(f"{len(data)} bytes; a trigger message has {C.MQTM_LENGTH_1}")
    try:
        return MQTM.unpack_from(data)
    except DecodeError as exc:
        raise ValueError(str(exc)) from None


class Monitor:
    """One trigger monitor on one initiation queue. ``launch`` starts a program (a test may
    give its own); ``say`` reports what happens."""

    def __init__(self, client: Client, qmgr: str, initq: str, say: Callable[[str], None],
                 launch: Callable[[Start], Any] | None = None) -> None:
        self.client, self.qmgr, self.initq = client, qmgr, initq
        self.say = say
        self.launch = launch or _launch
        self.started = 0

    def run(self, limit: int | None = None, poll: float = 1.0) -> int:
        """Serve the initiation queue until the queue manager ends (or ``limit`` programs
        were started); returns the exit code."""
        try:
            queue = self.client.open(self.initq, options=C.MQOO_INPUT_AS_Q_DEF | C.MQOO_FAIL_IF_QUIESCING)
        except MQError as exc:
            self.say(f"AMQ5740E: cannot open initiation queue {self.initq}: {exc}")
            return EXIT_NOT_RUN
        self.say(f"Waiting for a trigger message on {self.initq} (queue manager {self.qmgr}).")
        while limit is None or self.started < limit:
            try:
                msg = queue.get(poll, accept_truncated=True, options=C.MQGMO_FAIL_IF_QUIESCING)
            except NoMessageAvailable:
                continue
            except MQError as exc:
                if exc.reason in _ENDING:
                    self.say(f"The queue manager is ending ({exc.reason}); the trigger monitor ends.")
                    return EXIT_ENDING
                self.say(f"AMQ5741E: MQGET on {self.initq} failed: {exc}")
                return EXIT_INTERRUPTED
            self.handle(msg.md.format, msg.data)
        return EXIT_ENDING

    def handle(self, fmt: str, data: bytes) -> None:
        try:
            tm = read_trigger_message(fmt, data)
            start = command_for(tm, self.qmgr)
        except ValueError as exc:
            self.say(f"AMQ5742E: not a trigger message this monitor can act on, skipped: {exc}")
            return
        self.say(f"Starting {tm.appl_id!r} for queue {tm.q_name} (process {tm.process_name}).")
        try:
            self.launch(start)
        except OSError as exc:
            self.say(f"AMQ5743E: could not start {start.argv[0]!r}: {exc}")
            return
        self.started += 1


def _launch(start: Start) -> None:
    proc = subprocess.Popen(start.argv, stdin=subprocess.DEVNULL)  # no shell: argv from shlex
    if not start.background:
        proc.wait()


def register(group: click.Group, home_of: Callable[[click.Context, str | None], Path],
             home_option: Callable[[Any], Any]) -> None:
    """Add ``trigger-monitor`` to the ``ferrymq`` command group."""

    @group.command(name="trigger-monitor")
    @home_option
    @click.argument("name")
    @click.option("--initq", "-q", default=DEFAULT_INITQ, show_default=True, help="The initiation queue to serve.")
    @click.option("--conn", "-c", "conn", default=None,
                  help="Connect to host(port) instead of the local queue manager's address.")
    @click.option("--limit", type=click.IntRange(1), default=None, hidden=True,
                  help="End after starting this many programs (tests).")
    @click.pass_context
    def trigger_monitor(ctx: click.Context, name: str, initq: str, conn: str | None, limit: int | None,
                        home_here: str | None) -> None:
        """Start programs for trigger messages on an initiation queue (like runmqtrm).

        \b
          ferrymq trigger-monitor QM1                         # SYSTEM.DEFAULT.INITIATION.QUEUE
          ferrymq trigger-monitor QM1 --initq APP.INITQ
        """
        try:
            client = control_client(home_of(ctx, home_here), name, conn, "ferrymq trigger-monitor")
        except (click.ClickException, MQError, OSError) as exc:
            click.echo(f"AMQ8146E: queue manager {name} is not available: {exc}", err=True)
            ctx.exit(EXIT_NOT_RUN)
            return
        try:
            code = Monitor(client, name, initq, lambda line: click.echo(line, err=True)).run(limit)
        finally:
            with contextlib.suppress(MQError):
                client.disconnect()
        ctx.exit(code)
