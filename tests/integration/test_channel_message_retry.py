"""Message retry at the receiving agent (MRRTY, MRTMR) between two real queue managers: a
put that fails because the queue is put-inhibited is tried again MRRTY times every MRTMR
milliseconds; the message arrives if the queue takes it meanwhile, and goes to the
dead-letter queue with the reason once the retries run out (docs/distributed.md)."""

from __future__ import annotations

import time
from pathlib import Path

from channel_pair import setup_pair, wait_for

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH


def test_a_put_inhibited_queue_is_retried_then_dead_lettered(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MRRTY(40) MRTMR(250)\n"
                 "DEFINE QLOCAL(APP.HOLD) PUT(DISABLED)\n")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            c1.open("APP.HOLD", object_q_mgr_name="QM2").put(b"first", persistent=True)
            wait_for(lambda: "event=channel_message_retry channel=QM1.TO.QM2 queue=APP.HOLD reason=2051"
                     in qm2.log_tail(50, having=("channel_message_retry",)))
            # within the retries (10 s, room for a slow mqsc process on a loaded machine)
            qm2.mqsc("ALTER QLOCAL(APP.HOLD) PUT(ENABLED)")
            assert c2.open("APP.HOLD").get(wait=20.0).data == b"first"
            qm2.mqsc("ALTER QLOCAL(APP.HOLD) PUT(DISABLED)")
            started = time.monotonic()
            c1.open("APP.HOLD", object_q_mgr_name="QM2").put(b"second", persistent=True)
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=60.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_PUT_INHIBITED, "APP.HOLD")
            assert dead.data.endswith(b"second")
            assert time.monotonic() - started >= 40 * 0.25  # not dead-lettered before MRRTY x MRTMR
            assert "left=0" in qm2.log_tail(50, having=("channel_message_retry",))
    finally:
        qm1.stop()
        qm2.stop()
