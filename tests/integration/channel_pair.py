"""Two real queue managers joined by a sender/receiver channel pair each way, for the
channel tests: QM1 --QM1.TO.QM2--> QM2 and back through QM2.TO.QM1 (docs/distributed.md).

Each queue manager's channel listener needs a port its partner's CONNAME names across
restarts, so it is chosen free once (bound to 127.0.0.1 port 0, then released) and kept.
"""

from __future__ import annotations

import socket
from pathlib import Path

from qm_process import QueueManagerProcess


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def setup_pair(home: Path, retry: str = "SHORTRTY(1000) SHORTTMR(1)", batch: int = 50) -> tuple[QueueManagerProcess,
                                                                                                QueueManagerProcess]:
    qm1 = QueueManagerProcess(home, "QM1")
    qm2 = QueueManagerProcess(home, "QM2")
    qm1.start()
    qm2.start()
    ports = {"QM1": free_port(), "QM2": free_port()}
    for me, other in ((qm1, qm2), (qm2, qm1)):
        me.mqsc(f"""
DEFINE LISTENER(CHL.LISTENER) TRPTYPE(TCP) PORT({ports[me.name]}) CONTROL(QMGR)
DEFINE QLOCAL({other.name}) USAGE(XMITQ)
DEFINE CHANNEL({me.name}.TO.{other.name}) CHLTYPE(SDR) CONNAME('127.0.0.1({ports[other.name]})') +
       XMITQ({other.name}) BATCHSZ({batch}) HBINT(5) DISCINT(0) {retry}
DEFINE CHANNEL({other.name}.TO.{me.name}) CHLTYPE(RCVR)
DEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)
DEFINE QLOCAL(APP.REPLY)
DEFINE QREMOTE(TO.{other.name}.APP) RNAME(APP.IN) RQMNAME({other.name}) XMITQ({other.name})
START LISTENER(CHL.LISTENER)
""")
    return qm1, qm2
