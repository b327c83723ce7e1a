"""Properties put either way — through a pymqi message handle, or as an MQRFH2 at the start of
the body — survive a SIGKILL of the queue-manager process, and after the restart are the same
message to every kind of getter: a pymqi application with a handle, one without (reading
the MQRFH2), and the Pythonic client's typed mapping."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.mq import constants as C
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.pymqi import CMQC
from ferrymq.wire.rfh2 import unpack_chain

WORKER = Path(__file__).with_name("server_worker.py")
USR = b"<usr><colour>red</colour><n dt='i4'>7</n><raw dt='bin.hex'>01FF</raw><none xsi:nil='true'></none></usr>"


def _start(directory: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(WORKER), str(directory)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return proc, f"127.0.0.1({int(line.split()[1])})"


def _put_both_ways(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "CHAOS")
    h = pymqi.MessageHandle(qmgr)
    h.properties.set("colour", "red")
    h.properties.set("n", 7, CMQC.MQTYPE_INT32)
    h.properties.set("raw", b"\x01\xff", CMQC.MQTYPE_BYTE_STRING)
    h.properties.set("none", None, CMQC.MQTYPE_NULL)
    rfh2 = pymqi.RFH2()
    rfh2["Format"] = CMQC.MQFMT_STRING
    rfh2.add_folder(USR)
    for _ in range(3):  # one pair for each kind of getter
        q.put(b"body", pymqi.MD(Format=CMQC.MQFMT_STRING, Persistence=CMQC.MQPER_PERSISTENT),
              pymqi.PMO(NewMsgHandle=h.msg_handle))
        q.put_rfh2(b"body", pymqi.MD(Format=CMQC.MQFMT_RF_HEADER_2, Persistence=CMQC.MQPER_PERSISTENT),
                   pymqi.PMO(), [rfh2])
    q.close()


def _pymqi_with_handle(qmgr: pymqi.QueueManager) -> object:
    q = pymqi.Queue(qmgr, "CHAOS")
    h = pymqi.MessageHandle(qmgr)
    md = pymqi.MD()
    body = q.get(None, md, pymqi.GMO(MsgHandle=h.msg_handle))
    q.close()
    return body, md.Format, [(k, v) for k, v in h.properties.items()]


def _pymqi_without_handle(qmgr: pymqi.QueueManager) -> object:
    q = pymqi.Queue(qmgr, "CHAOS")
    md = pymqi.MD()
    raw = q.get(None, md, pymqi.GMO())
    q.close()
    headers, end, fmt, _ = unpack_chain(raw, md.Format.decode(), md.Encoding)
    props: dict[str, object] = {}
    for header in headers:
        for text in header.folders:
            props.update(folder_properties(text) or {})
    return raw[end:], fmt.rstrip(), props


def test_both_ways_survive_a_kill_and_reach_every_getter_alike(tmp_path: Path) -> None:
    proc, addr = _start(tmp_path)
    try:
        qmgr = pymqi.connect("CHAOSQM", "DEV.APP.SVRCONN", addr)
        _put_both_ways(qmgr)
        qmgr.disconnect()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc, addr = _start(tmp_path)
    try:
        qmgr = pymqi.connect("CHAOSQM", "DEV.APP.SVRCONN", addr)
        with_handle = [_pymqi_with_handle(qmgr) for _ in range(2)]
        without = [_pymqi_without_handle(qmgr) for _ in range(2)]
        qmgr.disconnect()
        with fc.connect("CHAOSQM", addr) as client:
            q = client.open("CHAOS")
            typed = [q.get(wait=1.0) for _ in range(2)]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    expect = {"colour": "red", "n": 7, "raw": b"\x01\xff", "none": None}
    assert with_handle[0] == with_handle[1]
    assert with_handle[0] == (b"body", CMQC.MQFMT_STRING, list(expect.items()))
    assert without[0] == without[1] == (b"body", "MQSTR", expect)  # PROPCTL(COMPAT): usr goes in an MQRFH2
    assert typed[0].properties == typed[1].properties == expect
    assert [typed[i].properties.type_of("n") for i in (0, 1)] == [C.MQTYPE_INT32] * 2
    assert typed[0].data == typed[1].data == b"body"
