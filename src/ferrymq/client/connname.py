"""MQ connection names: ``"host(port)"``, comma-separated lists tried in order.

``"localhost(1414)"``, ``"10.0.0.1(1415), backup(1414)"``, ``"host"`` (port 1414) and,
leniently, ``"host:port"``. IPv6 addresses go in the host part: ``"::1(1414)"``.

A name that breaks these rules is ``MalformedConnName``: MQRC_CD_ERROR (2277), IBM's
reason for a channel definition (whose ConnectionName this is) holding data that is not
valid — not MQRC_HOST_NOT_AVAILABLE (2538), which says that nothing answered.
"""

from __future__ import annotations

import re

from ferrymq.errors import MQError
from ferrymq.mq import constants as C

DEFAULT_PORT = 1414
RULE = "each entry is host or host(port) with a port from 1 to 65535, entries separated by commas"
_ENTRY = re.compile(r"^\s*(?P<host>[^()\s]+?)\s*(?:\(\s*(?P<port>\d+)\s*\))?\s*$")


class MalformedConnName(MQError, ValueError):
    """A connection name that breaks ``RULE`` (MQRC_CD_ERROR); also a ValueError, as it was."""

    def __init__(self, comp: int = C.MQCC_FAILED, reason: int = C.MQRC_CD_ERROR, detail: str = "") -> None:
        super().__init__(comp, reason, detail)


def parse_conn_name(conn_name: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a connection name, in order.

    Raises:
        MalformedConnName: an entry is not ``host`` or ``host(port)``, or a port is out of range.
    """
    def malformed(why: str) -> MalformedConnName:
        return MalformedConnName(detail=f"connection name {conn_name!r} is malformed: {why} ({RULE})")

    out: list[tuple[str, int]] = []
    for entry in conn_name.split(","):
        if not entry.strip():
            continue
        m = _ENTRY.match(entry)
        if m is None:
            raise malformed(f"{entry.strip()!r} is not host(port)")
        host, port_text = m.group("host"), m.group("port")
        if port_text is None and host.count(":") == 1:
            host, port_text = host.split(":")
            if not port_text.isdigit():
                raise malformed(f"{entry.strip()!r} is not host(port)")
        port = int(port_text) if port_text else DEFAULT_PORT
        if not 0 < port < 65536:
            raise malformed(f"port {port} in {entry.strip()!r} is out of range")
        out.append((host, port))
    if not out:
        raise malformed("it names no host")
    return out
