"""L1: ferrymq's client protocol — frames in GPackets and the sans-IO machines that speak it.

``ClientConnection`` and ``ServerConnection`` (h11 shape) live in ``connection``; the
events in ``events``; the packet types and body layouts in ``codec`` (and docs/protocol.md).
"""

from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection, ServerConnection, State
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError

__all__ = ["CLOSED", "NEED_DATA", "ClientConnection", "LocalProtocolError", "RemoteProtocolError", "ServerConnection", "State"]
