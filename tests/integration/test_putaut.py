"""PUTAUT on a receiver channel between two queue-manager processes: whose authority puts
each arriving message."""

from __future__ import annotations

from pathlib import Path

import pytest
from channel_pair import setup_pair

from ferrymq.client import connect
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

pytestmark = pytest.mark.timeout(180)

APP, APP_PASSWORD = "app", "app-pw"


def test_putaut_ctx_puts_with_the_messages_own_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PUTAUT(CTX): each message arriving at QM2 is put with the authority of the
    UserIdentifier it carries, not the receiver's MCAUSER (which here may put nowhere)."""
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path))
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm2.add_user("partner", "partner-pw")
        qm2.add_user(APP, APP_PASSWORD)
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MCAUSER('partner') PUTAUT(CTX)\n"
                  "DEFINE QLOCAL(APP.OTHER)\n"
                  "SET AUTHREC PROFILE(APP.OTHER) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(PUT,SETALL)\n")
        with connect("QM1") as c1:
            q = c1.open("APP.OTHER", object_q_mgr_name="QM2", options=C.MQOO_OUTPUT | C.MQOO_SET_IDENTITY_CONTEXT)
            for user in (APP, "stranger"):
                q.put(f"from {user}".encode(), md=MQMD(user_identifier=user, persistence=C.MQPER_PERSISTENT),
                      options=C.MQPMO_SET_IDENTITY_CONTEXT)
        with connect("QM2") as c2:
            arrived = c2.open("APP.OTHER").get(wait=30.0)
            assert (arrived.data, arrived.md.user_identifier.strip()) == (b"from app", APP)
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=30.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_NOT_AUTHORIZED, "APP.OTHER")
            assert dead.data.endswith(b"from stranger")
    finally:
        qm1.stop()
        qm2.stop()
