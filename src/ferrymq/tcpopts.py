"""The socket options of every ferrymq TCP connection, client and server end alike.

TCP_NODELAY: a frame goes out when written, not held back for the next one.

TCP keepalive, as IBM MQ's KeepAlive=YES (qm.ini TCP stanza) has it: when a conversation
agreed no heartbeats (HBINT(0)) nothing else notices a peer that is gone without a word
(its host down, a firewall that dropped the connection): a client waiting for a reply,
or in an unlimited MQGET, would wait for ever, and the server would keep the connection's
handles. With keepalive the kernel probes a connection quiet for ``KEEPALIVE_IDLE``
seconds every ``KEEPALIVE_INTERVAL`` seconds, and ends it after ``KEEPALIVE_COUNT``
probes unanswered: a dead peer is noticed within about two minutes (the operating
system's default would take over two hours). The waiting call then fails with
MQRC_CONNECTION_BROKEN (2009) as for any lost connection.
"""

from __future__ import annotations

import socket

KEEPALIVE_IDLE = 60  # seconds quiet before the first probe
KEEPALIVE_INTERVAL = 10  # seconds between probes
KEEPALIVE_COUNT = 6  # unanswered probes before the connection is ended
_TCP_OPTIONS = (("TCP_NODELAY", 1), ("TCP_KEEPIDLE", KEEPALIVE_IDLE), ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
                ("TCP_KEEPCNT", KEEPALIVE_COUNT))


def tune_tcp(sock: socket.socket) -> None:
    """Set the options above on a TCP socket (a local socket is left as it is; an option
    the platform lacks is skipped)."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in _TCP_OPTIONS:
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)
