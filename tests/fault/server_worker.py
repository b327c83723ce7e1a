"""A queue-manager server process for the reconnect chaos test: a file journal in DATA_DIR,
queue CHAOS, listening on 127.0.0.1 port 0. Prints "PORT <n>" once it accepts connections.

Usage: python server_worker.py DATA_DIR
"""

from __future__ import annotations

import asyncio
import sys

from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal


async def main(directory: str) -> None:
    qm = QueueManager.start("CHAOSQM", FileJournal(directory), SystemClock())
    if qm.objects.find("CHAOS") is None:
        qm.objects.define("QLOCAL", "CHAOS", {"MAXDEPTH": 1_000_000, "DEFPSIST": "YES"})
        qm.journal.sync()
    server = QueueManagerServer(qm, "127.0.0.1", 0, heartbeat=1.0, tick_interval=0.2)
    await server.start()
    print(f"PORT {server.port}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
