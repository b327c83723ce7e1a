"""`make demo`: a queue manager on embedded defaults, with messages flowing through it.

Starts a queue manager (file journal in a temporary directory, removed at the end) listening on 127.0.0.1 with a
port the system picks, then uses the ferrymq client over TCP like any application would:
a producer puts persistent and non-persistent messages of several priorities, a browser
lists them in delivery order, a consumer backs out a unit of work (BackoutCount goes up),
a refused call shows IBM's reason, and a restart from the journal keeps exactly the
persistent messages.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ferrymq.api import EmbeddedQueueManager
from ferrymq.client import Client, Message, connect
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal

console = Console()
QMGR = "DEMO.QM"
QUEUE = "DEMO.ORDERS"


def start(directory: Path) -> tuple[EmbeddedQueueManager, FileJournal]:
    journal = FileJournal(directory)
    return EmbeddedQueueManager(QMGR, journal, listen=True, host="127.0.0.1", port=0).start(), journal


def table(title: str, messages: list[Message]) -> Table:
    t = Table(title=title)
    for col in ("body", "priority", "persistent", "backout", "MsgId", "put (GMT)"):
        t.add_column(col)
    for m in messages:
        md = m.md
        t.add_row(m.data.decode(), str(md.priority), "yes" if md.persistence else "no", str(md.backout_count),
                  md.msg_id.hex()[:20] + "…", f"{md.put_date} {md.put_time}")
    return t


def client(qm: EmbeddedQueueManager, appl: str) -> Client:
    return connect(QMGR, f"127.0.0.1({qm.port})", appl_name=appl)


def main(directory: str | None = None) -> None:
    """The demo, its journal in ``directory`` (kept), else in a temporary one removed at the end."""
    if directory is not None:
        show(Path(directory))
        return
    with tempfile.TemporaryDirectory(prefix="ferrymq-demo-") as tmp:
        show(Path(tmp))


def show(base: Path) -> None:
    console.rule(f"[bold]ferrymq demo: queue manager {QMGR}")
    qm, journal = start(base)
    console.print(f"data directory {base}; listening on 127.0.0.1({qm.port})")
    qm.run(lambda: qm.qmgr.objects.define("QLOCAL", QUEUE, {"MAXDEPTH": 100, "DESCR": "demo"}, replace=True)
           if qm.qmgr else None)

    with client(qm, "demo-producer") as producer, producer.open(QUEUE) as q:
        for body, prio, persistent in [("order-1", 1, True), ("order-2 (urgent)", 8, True), ("order-3", 1, False),
                                       ("order-4", 4, True), ("order-5 (urgent)", 8, False)]:
            q.put(body, priority=prio, persistent=persistent)
        console.print("producer put 5 messages over TCP (persistent ones acknowledged after fdatasync)")
        try:
            q.put("no reply queue", msg_type=C.MQMT_REQUEST)
        except MQError as exc:
            console.print(f"refused: [yellow]{exc}[/yellow]")

    with client(qm, "demo-consumer") as consumer, consumer.open(QUEUE) as q:
        console.print(table("browse: priority order, FIFO within a priority", list(q.browse())))
        try:
            with consumer.transaction():
                got = q.get()
                console.print(f"consumer got {got.data.decode()!r} in a unit of work … and fails")
                raise RuntimeError("simulated processing failure")
        except RuntimeError:
            pass
        again = next(iter(q.browse()))
        console.print(f"backed out: {again.data.decode()!r} is back with BackoutCount {again.md.backout_count}")
        console.print(f"CURDEPTH {q.depth()}; stopping and restarting the queue manager from its journal …")
    qm.stop()
    journal.close()

    qm, journal = start(base)
    with client(qm, "demo-consumer") as consumer, consumer.open(QUEUE) as q:
        survivors = list(q.messages(wait=0.0))
        console.print(table("after restart: the persistent messages, BackoutCount kept", survivors))
    qm.stop()
    journal.close()
    console.rule("[bold green]demo complete")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
