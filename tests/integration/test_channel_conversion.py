"""CONVERT(YES) on a sender channel between two real queue managers (separate processes on
127.0.0.1): the message arrives in the receiving queue manager's CCSID and Encoding."""

from __future__ import annotations

from pathlib import Path

from channel_pair import setup_pair

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

TEXT = "Grüße aus Zürich: [1] ^ ¬ ¢ é"


def test_sender_converts_to_the_receivers_ccsid_only_with_convert_yes(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        assert "AMQ8005I" in qm2.mqsc("ALTER QMGR CCSID(500)")
        assert "AMQ8016I" in qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONVERT(YES)")
        big_utf8 = MQMD(format="MQSTR", coded_char_set_id=1208, encoding=C.MQENC_NORMAL)
        dlh = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="DEST", encoding=C.MQENC_NORMAL, coded_char_set_id=1208,
                    format="MQSTR").pack(big_endian=True)
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            out.put(TEXT.encode(), md=big_utf8, persistent=True)
            out.put(b"\x00\x01opaque", md=big_utf8.replace(format=""))  # no conversion for MQFMT_NONE
            out.put(dlh + TEXT.encode(), md=big_utf8.replace(format="MQDEAD"))
            inq = c2.open("APP.IN")
            text, opaque, dead = (inq.get(wait=20.0) for _ in range(3))
            assert text.data == TEXT.encode("cp500") and text.text == TEXT
            assert (text.md.coded_char_set_id, text.md.encoding) == (500, C.MQENC_NATIVE)
            assert opaque.data == b"\x00\x01opaque" and opaque.md.coded_char_set_id == 1208
            assert dead.md.coded_char_set_id == 500 and dead.data[:4] == "DLH ".encode("cp500")
            assert dead.data[172:] == TEXT.encode("cp500")
            # The other way CONVERT is NO (the default): what QM2 sends arrives as put.
            c2.open("TO.QM1.APP").put(TEXT.encode("cp500"), md=MQMD(format="MQSTR", coded_char_set_id=500))
            back = c1.open("APP.IN").get(wait=20.0)
            assert (back.data, back.md.coded_char_set_id) == (TEXT.encode("cp500"), 500)
            # ... and a getter there converts it itself.
            c2.open("TO.QM1.APP").put(TEXT.encode("cp500"), md=MQMD(format="MQSTR", coded_char_set_id=500))
            assert c1.open("APP.IN").get(wait=20.0, ccsid=1208).data == TEXT.encode()
    finally:
        qm1.stop()
        qm2.stop()
