"""Shared by the samples: the connection arguments and how they connect, pymqi style;
reason codes with IBM's names; and ending quietly when the reader of the output goes away.

A sample connects as an MQ client when ``--conn`` (or the MQSERVER environment variable,
``CHANNEL/TCP/host(port)``) names the queue manager's address, and in bindings mode
otherwise: to the queue manager of that name started on this machine from the same
``FERRYMQ_HOME`` (through its local socket, as IBM's samples reach a local queue manager).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import ferrymq.pymqi as pymqi
from ferrymq.errors import reason_name


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qmgr", nargs="?", default="", help="queue manager name (default: the one that answers)")
    parser.add_argument("--conn", metavar="CONNAME", default=None,
                        help="connection name, e.g. 'localhost(1414)' (default: $MQSERVER, else bindings: the queue manager started here from $FERRYMQ_HOME)")
    parser.add_argument("--channel", default="SYSTEM.DEF.SVRCONN", help="server-connection channel name")
    parser.add_argument("--user", default=None,
                        help="user id to connect as (its password from $FERRYMQ_PASSWORD; without --user, "
                             "$FERRYMQ_USER and $FERRYMQ_PASSWORD over TCP, the OS user in bindings mode)")


def client_address(args: argparse.Namespace) -> tuple[str, str] | None:
    """(channel, connection name) from ``--conn`` or MQSERVER; None for bindings mode."""
    if args.conn:
        return args.channel, args.conn
    server = os.environ.get("MQSERVER", "")
    if server.count("/") >= 2:
        channel, _, conn = server.split("/", 2)
        return channel, conn
    return None


def password(args: argparse.Namespace) -> str | None:
    """The password for ``--user``: $FERRYMQ_PASSWORD (never an argument, which ``ps`` shows)."""
    return os.environ.get("FERRYMQ_PASSWORD") if args.user else None


def connect(args: argparse.Namespace) -> pymqi.QueueManager:
    """Connect as the arguments say; MQMIError if that fails."""
    address = client_address(args)
    if address is not None:
        return pymqi.connect(args.qmgr, address[0], address[1], args.user, password(args))
    return pymqi.connect(args.qmgr, user=args.user, password=password(args))


def reason(code: int) -> str:
    """A reason code as IBM's samples show it, with its name: ``2085 (MQRC_UNKNOWN_OBJECT_NAME)``."""
    name = reason_name(code)
    return str(code) if name == str(code) else f"{code} ({name})"


def run(main: Callable[[], int]) -> None:
    """Exit with ``main()``'s status; a reader that stops early (``| head``) ends the sample
    quietly instead of with a BrokenPipeError traceback."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would flush stdout again at exit and fail the same way: point it at /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = 0
    sys.exit(status)
