"""Shared by the samples: the connection arguments and how they connect, pymqi style.

A sample connects as an MQ client when ``--conn`` (or the MQSERVER environment variable,
``CHANNEL/TCP/host(port)``) names the queue manager's address, and in bindings mode
otherwise (which, in ferrymq, needs a queue manager embedded in the same process).
"""

from __future__ import annotations

import argparse
import os

import ferrymq.pymqi as pymqi


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qmgr", nargs="?", default="", help="queue manager name (default: the one that answers)")
    parser.add_argument("--conn", metavar="CONNAME", default=None,
                        help="connection name, e.g. 'localhost(1414)' (default: $MQSERVER, else bindings mode)")
    parser.add_argument("--channel", default="SYSTEM.DEF.SVRCONN", help="server-connection channel name")
    parser.add_argument("--user", default=None, help="user id to connect as")


def connect(args: argparse.Namespace) -> pymqi.QueueManager:
    """Connect as the arguments say; MQMIError if that fails."""
    if args.conn:
        return pymqi.connect(args.qmgr, args.channel, args.conn, args.user)
    server = os.environ.get("MQSERVER", "")
    if server.count("/") >= 2:
        channel, _, conn = server.split("/", 2)
        return pymqi.connect(args.qmgr, channel, conn, args.user)
    return pymqi.connect(args.qmgr, user=args.user)
