"""L3: the queue manager's asyncio server — client handlers, group commit, waits, lifecycle."""

from ferrymq.server.server import QueueManagerServer

__all__ = ["QueueManagerServer"]
