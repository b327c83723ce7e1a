"""`make demo`: a queue manager on embedded defaults, with messages flowing through it.

Runs in one process ("bindings mode"): the engine over a file journal in a fresh
directory. Shows priority order, browse, a backed-out unit of work raising BackoutCount,
a refused call with IBM's reason, and a restart from the journal that keeps exactly the
persistent messages.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.wire.mqmd import MQMD

console = Console()


def start(directory: Path) -> QueueManager:
    return QueueManager.start("DEMO.QM", FileJournal(directory), SystemClock())


def get(qm: QueueManager, hconn: int, hobj: int, options: int = C.MQGMO_NO_WAIT) -> GetResult:
    res = qm.get(hconn, hobj, MQMD(), GetOptions(options), 4096)
    assert isinstance(res, GetResult)
    qm.journal.sync()
    return res


def row(table: Table, res: GetResult) -> None:
    md = res.md
    table.add_row(res.data.decode(), str(md.priority), "yes" if md.persistence else "no", str(md.backout_count),
                  md.msg_id.hex()[:24] + "…", f"{md.put_date} {md.put_time}")


def table(title: str) -> Table:
    t = Table(title=title)
    for col in ("body", "priority", "persistent", "backout", "MsgId", "put (GMT)"):
        t.add_column(col)
    return t


def main(directory: str | None = None) -> None:
    base = Path(directory or tempfile.mkdtemp(prefix="ferrymq-demo-"))
    console.rule("[bold]ferrymq demo: queue manager DEMO.QM")
    console.print(f"data directory: {base}")
    qm = start(base)
    qm.objects.define("QLOCAL", "DEMO.ORDERS", {"MAXDEPTH": 100, "DESCR": "demo queue", "BOTHRESH": 3}, replace=True)
    qm.journal.sync()
    hconn = qm.connect(appl_name="ferrymq-demo", user="demo")
    hobj = qm.open(hconn, ObjectDescriptor("DEMO.ORDERS"), C.MQOO_OUTPUT | C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE).hobj
    for body, prio, persistent in [("order-1", 1, True), ("order-2 (urgent)", 8, True), ("order-3", 1, False),
                                   ("order-4", 4, True), ("order-5 (urgent)", 8, False)]:
        md = MQMD(priority=prio, persistence=C.MQPER_PERSISTENT if persistent else C.MQPER_NOT_PERSISTENT, format="MQSTR")
        qm.put(hconn, hobj, md, PutOptions(C.MQPMO_NO_SYNCPOINT), body.encode())
    qm.journal.sync()
    console.print("put 5 messages (3 persistent, fsynced before acknowledgement)")

    browse = table("browse: priority order, FIFO within a priority (queue unchanged)")
    res = get(qm, hconn, hobj, C.MQGMO_BROWSE_FIRST)
    while True:
        row(browse, res)
        try:
            res = get(qm, hconn, hobj, C.MQGMO_BROWSE_NEXT)
        except MQError:
            break
    console.print(browse)

    first = get(qm, hconn, hobj, C.MQGMO_SYNCPOINT)
    qm.backout(hconn)
    qm.journal.sync()
    again = get(qm, hconn, hobj, C.MQGMO_BROWSE_FIRST)
    console.print(f"got {first.data.decode()!r} in a unit of work, backed out: BackoutCount now {again.md.backout_count}")

    try:
        qm.put(hconn, hobj, MQMD(msg_type=C.MQMT_REQUEST), PutOptions(), b"no reply queue")
    except MQError as exc:
        console.print(f"a request without ReplyToQ is refused: [yellow]{exc}[/yellow]")

    depth = qm.objects.require("DEMO.ORDERS").messages.depth
    console.print(f"CURDEPTH before restart: {depth}; restarting the queue manager from its journal …")
    qm.journal.close()
    qm = start(base)
    hconn = qm.connect(appl_name="ferrymq-demo")
    hobj = qm.open(hconn, ObjectDescriptor("DEMO.ORDERS"), C.MQOO_INPUT_AS_Q_DEF).hobj
    after = table("after restart: only persistent messages survive (BackoutCount kept)")
    while True:
        try:
            row(after, get(qm, hconn, hobj))
        except MQError as exc:
            assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
            break
    console.print(after)
    qm.disconnect(hconn)
    qm.journal.close()
    console.rule("[bold green]demo complete")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
