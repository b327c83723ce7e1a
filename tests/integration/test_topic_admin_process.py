"""Topic administration against a real queue-manager process (``ferrymq create/start``,
port 0), through ``ferrymq mqsc`` (PCF over the command server, as ``runmqsc -c``): a topic
definition once answered survives SIGKILL, its ASPARENT values resolve in DISPLAY TPSTATUS,
and a publisher through the client API meets what it defines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ferrymq.client as fc
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

sys.path.insert(0, str(Path(__file__).parent))
from qm_process import QueueManagerProcess

pytestmark = pytest.mark.timeout(120)

SCRIPT = """\
DEFINE TOPIC(SPORT) TOPICSTR('Sport') DEFPRTY(4) DESCR('all sport')
DEFINE TOPIC(TENNIS) TOPICSTR('Sport/Tennis') PUB(DISABLED) DEFPSIST(YES)
DEFINE SUB('scores') TOPICSTR('Sport/Tennis/Scores') DESTCLAS(MANAGED)
"""


def test_topic_definitions_answered_survive_sigkill_and_govern_publishing(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home", "QM1").start()
    try:
        out = qm.mqsc(SCRIPT)
        assert out.count("AMQ8690I") == 2 and "AMQ8094I" in out, out
        qm.kill()  # the replies came after the definitions were on disk
        qm.start()
        out = qm.mqsc("DISPLAY TOPIC(TENNIS) PUB DEFPSIST\n"
                      "DISPLAY TPSTATUS('Sport/Tennis/Scores') PUB DEFPSIST DEFPRTY SUBCOUNT\n"
                      "DISPLAY SUB('scores') TOPICSTR DURABLE\n")
        assert "PUB(DISABLED)" in out and "DEFPSIST(YES)" in out, out
        assert "DEFPRTY(4)" in out and "SUBCOUNT(1)" in out, out
        assert "TOPICSTR(Sport/Tennis/Scores)" in out and "DURABLE(YES)" in out, out
        with fc.connect("QM1", qm.conn_name) as c:
            with pytest.raises(MQError) as err:
                c.publish("Sport/Tennis/Scores", b"6-4")
            assert err.value.reason == C.MQRC_PUT_INHIBITED
        out = qm.mqsc("ALTER TOPIC(TENNIS) PUB(ASPARENT)\nALTER TOPIC(SPORT) PUB(ENABLED)\n")
        assert out.count("AMQ8691I") == 2, out
        with fc.connect("QM1", qm.conn_name) as c:
            c.publish("Sport/Tennis/Scores", b"6-4")
        out = qm.mqsc("DISPLAY SBSTATUS('scores') NUMMSGS\nDELETE SUB('scores')\nDELETE TOPIC(TENNIS)\n")
        assert "NUMMSGS(1)" in out and "AMQ8095I" in out and "AMQ8692I" in out, out
    finally:
        qm.stop()
