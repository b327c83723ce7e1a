"""The queue manager's MAXPROPL (MaxPropertiesLength): the bytes of a message's property
names and values, however they were put (a handle or an MQRFH2), beyond it are
MQRC_PROPERTIES_TOO_BIG at MQPUT and MQPUT1, and nothing is stored."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of

from ferrymq.admin.session import Session
from ferrymq.engine.api import ObjectDescriptor, PutOptions
from ferrymq.engine.commands.pcfmap import run
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import MQRFH2

# "color" (5) + "red" (3) + "n" (1) + INT32 (4) = 13 bytes
HANDLE = PropertySet({"color": "red", "n": 7})
RFH2 = MQRFH2(("<usr><color>red</color><n dt='i4'>7</n></usr>",), C.MQENC_NATIVE, 1208, C.MQFMT_STRING).pack() + b"x"


def _put(env: Env, how: str, put1: bool = False) -> None:
    md = MQMD(format=C.MQFMT_RF_HEADER_2) if how == "rfh2" else MQMD(format=C.MQFMT_STRING)
    data, props = (RFH2, None) if how == "rfh2" else (b"x", HANDLE)
    if put1:
        env.qm.put1(env.hconn, ObjectDescriptor(object_name="Q"), md, PutOptions(), data, props)
    else:
        env.qm.put(env.hconn, env.open("Q", C.MQOO_OUTPUT), md, PutOptions(), data, props)


@pytest.mark.parametrize("put1", [False, True], ids=["MQPUT", "MQPUT1"])
@pytest.mark.parametrize("how", ["handle", "rfh2"])
def test_properties_beyond_maxpropl_are_refused(how: str, put1: bool) -> None:
    env = Env()
    env.define("Q")
    assert env.qm.qmgr_attr("MAXPROPL") == C.MQPROP_UNRESTRICTED_LENGTH  # NOLIMIT by default
    env.qm.objects.alter_qmgr({"MAXPROPL": 13})
    _put(env, how, put1)  # exactly at the limit
    env.qm.objects.alter_qmgr({"MAXPROPL": 12})
    with pytest.raises(MQError) as exc:
        _put(env, how, put1)
    assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTIES_TOO_BIG)
    assert env.depth("Q") == 1
    env.qm.objects.alter_qmgr({"MAXPROPL": 0})
    env.put(env.open("Q", C.MQOO_OUTPUT), b"no properties")  # a message without properties is not limited
    assert env.depth("Q") == 2


def test_maxpropl_in_mqsc() -> None:
    env = Env()
    s = Session(lambda cmd: run(env.qm, cmd))
    assert any("MAXPROPL(NOLIMIT)" in line for line in s.execute("DISPLAY QMGR MAXPROPL").messages)
    assert s.execute("ALTER QMGR MAXPROPL(1024)").messages == ["AMQ8005I: Queue manager changed."]
    assert env.qm.qmgr_attr("MAXPROPL") == 1024
    assert any("MAXPROPL(1024)" in line for line in s.execute("DISPLAY QMGR MAXPROPL").messages)
    s.execute("ALTER QMGR MAXPROPL(NOLIMIT)")
    assert env.qm.qmgr_attr("MAXPROPL") == -1
    assert s.execute("ALTER QMGR MAXPROPL(104857601)").messages[0].startswith("AMQ8426E")
