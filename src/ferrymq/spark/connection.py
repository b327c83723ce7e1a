"""One client connection per process and connection options, reused across Spark tasks.

Spark reuses its Python workers between tasks, so an executor keeps its connection for
the next task instead of paying a connect per partition. It reconnects by itself
(MQCNO_RECONNECT): a worker idle between tasks does not answer the queue manager's
heartbeats, so its connection may be gone when the next task comes. A unit of work in
flight when a connection goes is backed out (its task fails, and Spark retries or replays
it). A connection that failed otherwise is dropped (``discard``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ferrymq.client import Client, connect
from ferrymq.spark.options import FerryOptions

RECONNECT_FOR = 60.0  # seconds: then the task fails and Spark's own retry takes over
_clients: dict[tuple[str, str, str], Client] = {}


def _key(opts: FerryOptions) -> tuple[str, str, str]:
    return (opts.queue_manager, opts.conn_name, opts.appl_name)


def client_for(opts: FerryOptions) -> Client:
    """The process's connection for these options (connects on first use).

    Raises:
        QueueManagerUnavailable: no address of connName answered; MQError on refusal.
    """
    key = _key(opts)
    c = _clients.get(key)
    if c is None:
        c = _clients[key] = connect_for(opts)
    return c


def connect_for(opts: FerryOptions) -> Client:
    """A new connection for these options, not cached (a thread's own)."""
    return connect(opts.queue_manager, opts.conn_name, appl_name=opts.appl_name, channel=opts.channel,
                   timeout=60.0, reconnect=RECONNECT_FOR)


def discard(opts: FerryOptions) -> None:
    """Forget (and close) the connection, after a failure left it in an unknown state."""
    c = _clients.pop(_key(opts), None)
    if c is not None:
        with contextlib.suppress(Exception):
            c.disconnect()


@contextlib.contextmanager
def using(opts: FerryOptions) -> Iterator[Client]:
    """The cached connection for a block; dropped when the block raises."""
    c = client_for(opts)
    try:
        yield c
    except BaseException:
        discard(opts)
        raise
