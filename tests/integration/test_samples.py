"""The samples, run as programs against a live queue manager on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture
def conn(embedded: EmbeddedQueueManager) -> str:
    return f"127.0.0.1({embedded.port})"


def run(sample: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SAMPLES / sample), *args], input=stdin, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.parametrize("sample", ["amqsput.py", "amqsget.py", "amqsbcg.py", "amqsreq.py", "amqsech.py",
                                    "report_watch.py", "qdepth.py"])
def test_help(sample: str) -> None:
    done = run(sample, "--help")
    assert done.returncode == 0
    assert "usage:" in done.stdout and "--conn" in done.stdout


def test_put_browse_get(conn: str) -> None:
    done = run("amqsput.py", "Q1", "QM1", "--conn", conn, stdin="first message\nsecond message\n\nnot sent\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["Sample AMQSPUT0 start", "target queue is Q1", "Sample AMQSPUT0 end"]

    done = run("amqsbcg.py", "Q1", "QM1", "--conn", conn)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "MQGET of message number 1, CompCode:0 Reason:0" in out
    assert "MQGET of message number 2, CompCode:0 Reason:0" in out
    assert "  Format : 'MQSTR   '" in out
    assert "  StrucId  : 'MD  '  Version : 2" in out
    assert "  CodedCharSetId : 1208" in out
    assert " length - 13 of 13 bytes" in out
    assert "00000000:  6669 7273 7420 6D65 7373 6167 65         'first message   '" in out
    assert "No more messages" in out and "not sent" not in out

    done = run("amqsget.py", "Q1", "QM1", "--conn", conn, "--wait", "0.2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["Sample AMQSGET0 start", "message <first message>", "message <second message>",
                                        "no more messages", "Sample AMQSGET0 end"]
    done = run("amqsget.py", "Q1", "QM1", "--conn", conn, "--wait", "0")
    assert "message <" not in done.stdout


def test_mqserver_environment_and_errors(conn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQSERVER", f"SYSTEM.DEF.SVRCONN/TCP/{conn}")
    done = run("amqsput.py", "Q2", stdin="via MQSERVER\n")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run("amqsput.py", "NO.SUCH.QUEUE", stdin="x\n")
    assert done.returncode == 1
    assert "MQOPEN ended with reason code 2085" in done.stdout
    monkeypatch.delenv("MQSERVER")
    done = run("amqsget.py", "Q2", "QM1", "--conn", "127.0.0.1(1)", "--wait", "0")
    assert done.returncode == 1 and "MQCONNX ended with reason code 2538" in done.stdout
    done = run("amqsget.py", "Q2", "QM1", "--conn", conn, "--wait", "0")
    assert "message <via MQSERVER>" in done.stdout


def test_request_reply(conn: str) -> None:
    ready = threading.Event()
    served: list[bytes] = []

    def responder() -> None:
        qm = pymqi.connect("QM1", "SYSTEM.DEF.SVRCONN", conn)
        inq = pymqi.Queue(qm, "Q3", CMQC.MQOO_INPUT_SHARED)
        ready.set()
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=10_000)
        for _ in range(2):
            md = pymqi.MD()
            data = inq.get(None, md, gmo)
            served.append(md.ReplyToQ.rstrip(b" \0"))
            reply = pymqi.MD(MsgType=CMQC.MQMT_REPLY, CorrelId=md.MsgId, Format=CMQC.MQFMT_STRING)
            qm.put1(pymqi.OD(ObjectName=md.ReplyToQ.rstrip(b" \0")), data.upper(), reply)
        inq.close()
        qm.disconnect()

    t = threading.Thread(target=responder, daemon=True)
    t.start()
    assert ready.wait(10)
    done = run("amqsreq.py", "Q3", "QM1", "--conn", conn, "--wait", "10", stdin="ping\npong\n")
    t.join(10)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Sample AMQSREQ0 start" and lines[-1] == "Sample AMQSREQ0 end"
    assert "response <PING>" in lines and "response <PONG>" in lines
    reply_q = next(line.removeprefix("replies to ") for line in lines if line.startswith("replies to "))
    assert reply_q.startswith("AMQSREQ.") and served == [reply_q.encode()] * 2

    # the temporary dynamic reply queue went away with the sample
    qm = pymqi.connect("QM1", "SYSTEM.DEF.SVRCONN", conn)
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.Queue(qm, reply_q, CMQC.MQOO_INQUIRE)
    assert info.value.reason == CMQC.MQRC_UNKNOWN_OBJECT_NAME
    qm.disconnect()


def test_echo_server_and_report_watcher(conn: str, embedded: EmbeddedQueueManager) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", conn) as qm:
        q = qm.open("Q2")
        q.put(b"hello", reply_to_q="REPLY", report=C.MQRO_PAN | C.MQRO_COA)
        q.put(b"", feedback=C.MQFB_QUIT)
    done = run("amqsech.py", "Q2", "QM1", "--conn", conn, "--wait", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "echoed 5 bytes to REPLY" in done.stdout and "told to quit" in done.stdout
    watched = run("report_watch.py", "REPLY", "QM1", "--conn", conn, "--wait", "0.5")
    assert watched.returncode == 0, watched.stdout + watched.stderr
    lines = watched.stdout.splitlines()
    assert lines[0].startswith("MQFB_COA (259)") and "from=QM1" in lines[0]
    assert lines[1].startswith("not a report: MsgType 2")  # the echo reply
    assert lines[2].startswith("MQFB_PAN (275)")



def test_qdepth_monitors_queues_through_pcf(conn: str) -> None:
    done = run("amqsput.py", "Q2", "QM1", "--conn", conn, stdin="a\nb\nc\n\n")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run("qdepth.py", "Q*", "QM1", "--conn", conn, "--warn", "2")
    assert done.returncode == 1, done.stdout + done.stderr  # Q2 holds 3 > 2
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[1:]}
    assert rows["Q2"][:4] == ["3", "0", "0", "0"] and rows["Q1"][0] == "0"
    assert run("qdepth.py", "Q2", "QM1", "--conn", conn, "--warn", "10").returncode == 0
    assert run("qdepth.py", "NOPE", "QM1", "--conn", conn).returncode == 2
