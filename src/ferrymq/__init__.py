"""ferrymq: a message-queueing system with IBM MQ's semantics, written in Python.

``ferrymq.connect("QM1", "localhost(1414)")`` gives a blocking client (``connect_async`` an
asyncio one); ``ferrymq.embed(name, journal)`` runs a queue manager inside this process.
They are imported on first use, so ``import ferrymq.wire`` stays light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["connect", "connect_async", "embed"]


def __getattr__(name: str) -> Any:
    if name in ("connect", "connect_async"):
        import ferrymq.client as client

        return getattr(client, name)
    if name == "embed":
        from ferrymq.api import embed

        return embed
    raise AttributeError(f"module 'ferrymq' has no attribute {name!r}")
