"""Queue managers inside the test's own process, each with its server and channel
initiator, for channel tests that need to reach into an engine (its units in doubt, its
journal) while channels run over 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import ferrymq.client as fc
from ferrymq.admin.session import Session
from ferrymq.channels.host import EngineHost
from ferrymq.channels.initiator import ChannelInitiator
from ferrymq.engine.api import SystemClock
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.engine.qmgr import QueueManager
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal


@dataclass
class Node:
    qm: QueueManager
    server: QueueManagerServer
    channels: ChannelInitiator

    def mqsc(self, *commands: str) -> None:
        session = Session(lambda cmd: run_command(self.qm, cmd))
        for text in commands:
            res = session.execute(text)
            assert res.ok, res.messages


async def start_node(name: str, journal: FileJournal, *defs: str, pipeline_length: int = 1) -> Node:
    qm = QueueManager.start(name, journal, SystemClock())
    server = QueueManagerServer(qm, "127.0.0.1", 0, tick_interval=0.1)
    await server.start()
    node = Node(qm, server, ChannelInitiator(EngineHost(qm, server.committer.after, server.agent_done, wait=server.agent_wait),
                                             may_listen=lambda host: host == "127.0.0.1",
                                             pipeline_length=pipeline_length))
    node.mqsc(*defs)
    await node.channels.start()
    return node


async def wait_until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def put(node: Node, count: int, first: int, *, at_once: bool = False, size: int = 4) -> None:
    """Messages ``first``.. to TO.APP, each its number in 4 bytes (then dots to ``size``);
    ``at_once``: in one unit of work, so that the sender finds them all together."""
    async with await fc.connect_async(node.qm.name, f"127.0.0.1({node.server.port})") as c:
        q = await c.open("TO.APP")
        for i in range(first, first + count):
            await q.put(i.to_bytes(4, "big").ljust(size, b"."), persistent=True, syncpoint=at_once)
        if at_once:
            await c.commit()


def depth(node: Node, queue: str) -> int:
    """Committed messages only."""
    q = node.qm.objects.find(queue)
    assert q is not None
    return len(q.messages)


def curdepth(node: Node, queue: str) -> int:
    """CURDEPTH: with those a unit of work got or put and has not ended."""
    q = node.qm.objects.find(queue)
    assert q is not None
    return q.messages.depth


async def stop_node(node: Node) -> None:
    await node.channels.stop()
    await node.server.stop(quiesce=False)
    node.qm.journal.close()
