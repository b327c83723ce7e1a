"""A channel connection's reading end (ferrymq.channels.link.Inbound) on real sockets, under
both event loops: frames split anyhow by TCP come out whole, reading stops while READ_AHEAD
bytes wait to be taken and goes on once they are, and a partner that goes quiet, closes or
resets the connection ends the wait as it did through an asyncio StreamReader."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable

import pytest
import uvloop

from ferrymq.channels.link import ChannelError, Inbound, Link, open_link
from ferrymq.protocol import channel as P

LOOPS = {"asyncio": asyncio.run, "uvloop": uvloop.run}


def run(loop: str, main: Callable[[], Awaitable[None]]) -> None:
    LOOPS[loop](asyncio.wait_for(main(), 30))  # type: ignore[operator]


async def pair(accepted: Callable[[Link], Awaitable[None]]) -> tuple[asyncio.Server, int]:
    async def serve(link: Link) -> None:
        await accepted(link)

    server = await asyncio.get_running_loop().create_server(lambda: Inbound(serve), "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def handshake() -> tuple[P.ChannelConnection, bytes]:
    """A sender's machine after its HELLO was answered, and that HELLO's frame."""
    conn = P.ChannelConnection(sender=True)
    hello = conn.send(P.Hello("C", "QM1", 50, 4 * 1024 * 1024, 300, 999, pipelined=True))
    answer = P.ChannelConnection(sender=False)
    answer.receive_data(hello)
    list(answer.events())
    conn.receive_data(answer.send(P.HelloAck(0, "QM2", 50, 4 * 1024 * 1024, 300, 0, pipelined=True)))
    list(conn.events())
    return conn, hello


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_frames_split_anyhow_come_out_whole_and_reading_pauses_while_unread(loop: str) -> None:
    conn, hello = handshake()
    bodies = [bytes([i % 256]) * (1000 + 97 * i) for i in range(400)]  # ~20 MiB: far beyond READ_AHEAD
    stream = b"".join(conn.send(P.Message(b)) for b in bodies) + conn.send(P.BatchEnd(1, len(bodies)))

    async def main() -> None:
        got: list[bytes] = []
        paused: list[bool] = []
        done = asyncio.get_running_loop().create_future()

        async def accepted(link: Link) -> None:
            assert isinstance(await link.next_event(5), P.Hello)
            link.write(P.HelloAck(0, "QM2", 50, 4 * 1024 * 1024, 300, 0, pipelined=True))
            link.conn.agreed(4 * 1024 * 1024)
            await asyncio.sleep(0.3)  # nothing taken meanwhile: the partner's bytes pile up to READ_AHEAD
            paused.append(link.inbound.paused)
            assert link.inbound.end <= 2 * Inbound.READ_AHEAD
            while True:
                ev = await link.next_event(5)
                if isinstance(ev, P.BatchEnd):
                    break
                assert isinstance(ev, P.Message)
                got.append(ev.data)
            assert link.received == len(hello) + len(stream)
            done.set_result(None)

        server, port = await pair(accepted)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(hello)
        assert await reader.read(1)  # the HELLO_ACK's first byte: the messages may come
        for at in range(0, len(stream), 65_521):  # a prime: frames cut at every offset
            writer.write(stream[at:at + 65_521])
        await writer.drain()
        await done
        writer.close()
        server.close()
        assert paused == [True]
        assert got == bodies

    run(loop, main)


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_quiet_partner_times_out_and_a_closing_one_ends_the_conversation(loop: str) -> None:
    _, hello = handshake()

    async def main() -> None:
        outcomes: list[str] = []
        done = asyncio.get_running_loop().create_future()

        async def accepted(link: Link) -> None:
            with pytest.raises(TimeoutError):
                await link.next_event(0.1)
            assert isinstance(await link.next_event(5), P.Hello)  # what came after the timeout is kept
            assert not link.gone()
            with pytest.raises(ChannelError, match="closed the connection") as info:
                await link.next_event(5)
            outcomes.append(f"{info.value.reason} gone={link.gone()}")
            done.set_result(None)

        server, port = await pair(accepted)
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.sleep(0.3)
        writer.write(hello)
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.close()
        await done
        server.close()
        assert outcomes == ["2009 gone=True"]

    run(loop, main)


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_reset_ends_the_wait_with_the_error_and_drain_with_connection_lost(loop: str) -> None:
    async def main() -> None:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.setblocking(False)
        port = listener.getsockname()[1]
        link, _ = await open_link(f"127.0.0.1({port})", 5.0)
        accepted, _ = await asyncio.get_running_loop().sock_accept(listener)
        accepted.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        accepted.close()  # an RST, not a FIN
        with pytest.raises((ConnectionResetError, ChannelError)):
            await link.next_event(5)
        assert link.gone()
        await asyncio.sleep(0.05)
        with pytest.raises(ConnectionResetError):
            await link.flush()
        link.close()
        listener.close()

    run(loop, main)
