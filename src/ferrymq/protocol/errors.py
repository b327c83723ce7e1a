"""Protocol errors, split h11-style by who broke the rules.

``RemoteProtocolError`` is raised by ``next_event()`` when the peer's bytes break the
protocol (malformed, oversized, out of order); the connection is then unusable and the
driver ends it. ``LocalProtocolError`` is raised by ``send()`` when our own side tries
something the protocol does not allow (a bug in the caller, not in the peer).
"""

from __future__ import annotations

from ferrymq.errors import ProtocolError


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol; ``offset`` is where in its stream, when known."""

    def __init__(self, message: str, offset: int = -1) -> None:
        self.offset = offset
        super().__init__(message if offset < 0 else f"{message} (stream offset {offset})")


class LocalProtocolError(ProtocolError):
    """This side tried to send something the protocol does not allow in its state."""
