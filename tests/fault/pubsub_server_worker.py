"""A queue-manager server for the pub/sub SIGKILL test through clients: a file journal in
DATA_DIR, deep managed queues, listening on 127.0.0.1 port 0. Prints "PORT <n>" once it
accepts connections.

Usage: python pubsub_server_worker.py DATA_DIR
"""

from __future__ import annotations

import asyncio
import sys

from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal


async def main(directory: str) -> None:
    qm = QueueManager.start("PUBSUBSRV", FileJournal(directory), SystemClock())
    # A full managed queue would send copies to the dead-letter queue (USEDLQ): deep ones.
    qm.objects.alter("SYSTEM.DURABLE.MODEL.QUEUE", {"MAXDEPTH": 1_000_000})
    qm.journal.sync()
    server = QueueManagerServer(qm, "127.0.0.1", 0, heartbeat=1.0, tick_interval=0.2)
    await server.start()
    print(f"PORT {server.port}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
