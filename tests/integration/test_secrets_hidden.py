"""A password given to a connect is never written anywhere: not in the queue manager's or
the client's log lines, not in an error, not in a printed structure. (ferrymq has no
authentication yet: the password is ignored, see docs/security.md.)"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.pymqi import CMQC

SECRET = "s3cr3t-Pa55w0rd"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG):  # every logger, every level: the server's thread too
        yield caplog


def test_a_password_given_to_connect_appears_in_no_log_line(embedded: EmbeddedQueueManager,
                                                             logs: pytest.LogCaptureFixture) -> None:
    conn = f"127.0.0.1({embedded.port})"
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn, user="app", password=SECRET)
    q = pymqi.Queue(qm, "Q1")
    q.put(b"hello")
    assert q.get() == b"hello"
    q.close()
    qm.disconnect()

    cd = pymqi.CD(ChannelName=b"DEV.APP.SVRCONN", ConnectionName=conn.encode())
    qm2 = pymqi.QueueManager(None)
    qm2.connect_with_options("QM1", cd=cd, user="app", password=SECRET.encode())
    qm2.disconnect()
    messages = [r.getMessage() for r in logs.records]
    assert any("event=connect" in m and "app" in m for m in messages)  # the log did see the connects
    assert not [m for m in messages if SECRET in m]


def test_a_failed_connect_with_a_password_does_not_show_it(logs: pytest.LogCaptureFixture) -> None:
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.connect("QM1", "DEV.APP.SVRCONN", "127.0.0.1(1)", user="app", password=SECRET)  # nobody there
    assert info.value.reason in (CMQC.MQRC_Q_MGR_NOT_AVAILABLE, CMQC.MQRC_HOST_NOT_AVAILABLE)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert not [r for r in logs.records if SECRET in r.getMessage()]


def test_structures_holding_passwords_print_them_masked() -> None:
    cd = pymqi.CD(Password=SECRET.encode(), RemotePassword=SECRET.encode())
    sco = pymqi.SCO(KeyRepoPassword=SECRET.encode())
    for shown in (repr(cd), str(cd), repr(sco), str(sco)):
        assert SECRET not in shown and "Password" in shown
    assert cd.Password == SECRET.encode()  # only its printing is masked
