"""Bounding the blocking client's waits for bytes without a Python-level socket timeout.

A Python socket with a timeout calls poll(2) before every recv and every send, and
``settimeout`` switches the descriptor's blocking mode (an ioctl) each time it is called:
three system calls per request/reply trip that waiting does not need. The blocking client
keeps its socket in blocking mode instead and bounds each receive with the kernel's
SO_RCVTIMEO: a receive that waits that long fails with EAGAIN (BlockingIOError), and the
caller's loop decides what that means (its deadline passed, heartbeats stopped, or wait
on). The bound is set again only when it would let a receive wait too long; one shorter
than needed only wakes the loop early, so a client whose waits are alike sets it once.
"""

from __future__ import annotations

import socket
import struct

_TIMEVAL = struct.Struct("@ll")  # struct timeval: tv_sec, tv_usec


class RecvBound:
    """The SO_RCVTIMEO in force on one blocking socket."""

    __slots__ = ("seconds", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.seconds = 0.0  # the bound set (0: none, a receive waits until bytes come)

    def at_most(self, wait: float) -> None:
        """Make the next blocking receive return within ``wait`` seconds (> 0), or sooner."""
        if 0.0 < self.seconds <= wait:
            return
        # Whole seconds for waits of a second or more: the next waits, each a little
        # shorter than this one (a deadline computed per call), then keep the bound.
        sec = int(wait)
        usec = 0 if sec else max(1, int(wait * 1_000_000))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _TIMEVAL.pack(sec, usec))
        self.seconds = sec + usec / 1_000_000
