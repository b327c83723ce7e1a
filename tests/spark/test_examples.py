"""The examples/ pipelines, run briefly with the shared session against the test queue
manager: the request/reply service answers as the Report options ask; the queue report
writes its table, summary and chart. (Their command lines are what main() adds around
these functions.)"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect
from ferrymq.mq import constants as C

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import spark_queue_report
import spark_request_reply

pytestmark = pytest.mark.timeout(600)


def test_request_reply_service_honours_report_options(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                      tmp_path: Path) -> None:
    options = [C.MQRO_NONE, C.MQRO_PASS_CORREL_ID, C.MQRO_PASS_MSG_ID | C.MQRO_PASS_CORREL_ID,
               C.MQRO_PASS_DISCARD_AND_EXPIRY | C.MQRO_DISCARD_MSG]
    sent = {}
    with connect("QM1", qmp.conn_name) as c, c.open("EX.REQ") as q:
        for i, report in enumerate(options):
            r = q.put(f"hello spark {i}", reply_to_q="EX.REPLY", report=report, correl_id=b"C%023d" % i, priority=i,
                      persistent=True, expiry=3600.0 if i == 3 else None)
            sent[i] = r
        q.put(b"nobody to answer", priority=1)  # no ReplyToQ: skipped
    query = spark_request_reply.serve(spark, ferry, "EX.REQ", str(tmp_path / "ckpt"), available_now=True)
    query.awaitTermination(300)
    assert query.exception() is None
    with connect("QM1", qmp.conn_name) as c, c.open("EX.REPLY") as q:
        got = {m.text: m for m in q.browse()}
    assert sorted(got) == [f"HELLO SPARK {i} (3 words)" for i in range(4)]
    for i, report in enumerate(options):
        m, req = got[f"HELLO SPARK {i} (3 words)"], sent[i]
        assert m.md.msg_type == C.MQMT_REPLY and m.format == C.MQFMT_STRING.strip()
        assert m.correl_id == (req.correl_id if report & C.MQRO_PASS_CORREL_ID else req.msg_id)
        assert (m.msg_id == req.msg_id) == bool(report & C.MQRO_PASS_MSG_ID)
        assert (m.priority, m.persistent) == (i, True)
        assert m.md.report == (C.MQRO_DISCARD_MSG if i == 3 else C.MQRO_NONE)
        assert (0 < m.md.expiry <= 36000) if i == 3 else m.md.expiry == C.MQEI_UNLIMITED


def test_queue_report_writes_table_summary_and_chart(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                     tmp_path: Path) -> None:
    with connect("QM1", qmp.conn_name) as c, c.open("EX.REPORT") as q:
        for i in range(40):
            q.put(b"x" * (10 * (i + 1)), feedback=C.MQFB_COA if i % 4 == 0 else C.MQFB_NONE)
    summary = spark_queue_report.report(spark, ferry, "EX.REPORT", tmp_path)
    overall = summary["overall"].iloc[0]
    assert (overall["messages"], overall["bytes"], overall["min_size"], overall["max_size"]) == (40, 8200, 10, 400)
    assert 0 <= overall["youngest_s"] <= overall["oldest_s"] < 3600
    assert dict(zip(summary["feedback"]["feedback"], summary["feedback"]["messages"], strict=True)) == {
        C.MQFB_NONE: 30, C.MQFB_COA: 10}
    assert spark.read.parquet(str(tmp_path / "messages")).count() == 40
    assert spark.read.parquet(str(tmp_path / "summary")).count() == 1
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("EX.REPORT").depth == 40  # browsed, not taken


@pytest.mark.parametrize("script", ["spark_request_reply.py", "spark_queue_report.py"])
def test_example_command_lines(script: str) -> None:
    import subprocess

    path = Path(__file__).resolve().parents[2] / "examples" / script
    out = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--conn" in out.stdout and "--demo" in out.stdout
