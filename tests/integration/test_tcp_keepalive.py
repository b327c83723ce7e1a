"""TCP keepalive on real connections, both ends: with no heartbeats agreed (HBINT(0)) the
kernel's probes are what notice a peer gone without a word (ferrymq.tcpopts)."""

from __future__ import annotations

import asyncio
import socket

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager


def assert_keepalive(sock: socket.socket | None) -> None:
    """Probes after 60 s quiet, every 10 s, 6 unanswered end it (ferrymq.tcpopts)."""
    assert sock is not None
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 60
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 10
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 6
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1


def server_sockets(emb: EmbeddedQueueManager) -> list[socket.socket]:
    assert emb.server is not None
    return [h.transport.get_extra_info("socket") for h in emb.server.handlers if h.transport is not None]


def test_sync_and_asyncio_clients_and_the_server_set_keepalive(embedded: EmbeddedQueueManager) -> None:
    where = f"127.0.0.1({embedded.port})"
    with fc.connect("QM1", where, heartbeat=0) as client:
        q = client.open("Q1")
        q.put(b"x")
        assert q.get().data == b"x"
        assert_keepalive(client._sock)
        (accepted,) = server_sockets(embedded)
        assert_keepalive(accepted)

    async def asyncio_client() -> None:
        async with await fc.connect_async("QM1", where, heartbeat=0) as client:
            q = await client.open("Q1")
            await q.put(b"y")
            assert (await q.get()).data == b"y"
            assert client._transport is not None
            assert_keepalive(client._transport.get_extra_info("socket"))
            for accepted in server_sockets(embedded):  # the first client's may not be gone yet
                assert_keepalive(accepted)

    asyncio.run(asyncio_client())


def test_a_channel_s_own_connection_sets_keepalive() -> None:
    """The end a sender or requester opens (ferrymq.channels.link), not only the listener's."""
    from ferrymq.channels.link import open_link

    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        link, where = await open_link(f"127.0.0.1({port})", 5.0)
        try:
            assert where == f"127.0.0.1({port})"
            assert_keepalive(link.writer.get_extra_info("socket"))
        finally:
            link.close()
            server.close()
            await server.wait_closed()

    asyncio.run(main())
