"""MQ connection names: ``"host(port)"``, comma-separated lists tried in order.

``"localhost(1414)"``, ``"10.0.0.1(1415), backup(1414)"``, ``"host"`` (port 1414) and,
leniently, ``"host:port"``. IPv6 addresses go in the host part: ``"::1(1414)"``.
"""

from __future__ import annotations

import re

DEFAULT_PORT = 1414
_ENTRY = re.compile(r"^\s*(?P<host>[^()\s]+?)\s*(?:\(\s*(?P<port>\d+)\s*\))?\s*$")


def parse_conn_name(conn_name: str) -> list[tuple[str, int]]:
    """The (host, port) pairs of a connection name, in order.

    Raises:
        ValueError: an entry is not ``host`` or ``host(port)``, or a port is out of range.
    """
    out: list[tuple[str, int]] = []
    for entry in conn_name.split(","):
        if not entry.strip():
            continue
        m = _ENTRY.match(entry)
        if m is None:
            raise ValueError(f"connection name entry {entry.strip()!r} is not host(port)")
        host, port_text = m.group("host"), m.group("port")
        if port_text is None and host.count(":") == 1:
            host, port_text = host.split(":")
        port = int(port_text) if port_text else DEFAULT_PORT
        if not 0 < port < 65536:
            raise ValueError(f"port {port} in {entry.strip()!r} is out of range")
        out.append((host, port))
    if not out:
        raise ValueError("empty connection name")
    return out
