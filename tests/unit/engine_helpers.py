"""Small helpers shared by the engine tests (real engine, real MemoryJournal, fake clock)."""

from __future__ import annotations

import pytest

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions, PutResult
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


class Env:
    """A queue manager with one connection, and shorthand for the MQI calls."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.journal = MemoryJournal()
        self.qm = QueueManager.start("QM1", self.journal, self.clock)
        self.hconn = self.qm.connect(appl_name="tests", user="tester")

    def define(self, name: str, **attrs: object) -> None:
        self.qm.objects.define("QLOCAL", name, attrs)

    def open(self, name: str, options: int = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT | C.MQOO_BROWSE | C.MQOO_INQUIRE,
             hconn: int | None = None, **od: object) -> int:
        return self.qm.open(hconn or self.hconn, ObjectDescriptor(object_name=name, **od), options).hobj  # type: ignore[arg-type]

    def put(self, hobj: int, data: bytes = b"x", hconn: int | None = None, pmo: int = 0, **md: object) -> PutResult:
        return self.qm.put(hconn or self.hconn, hobj, MQMD(**md), PutOptions(pmo), data)  # type: ignore[arg-type]

    def get(self, hobj: int, options: int = C.MQGMO_NO_WAIT, buffer: int = 1 << 20, hconn: int | None = None,
            match: int = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID, **md: object) -> GetResult:
        res = self.qm.get(hconn or self.hconn, hobj, MQMD(**md), GetOptions(options, 0, match), buffer)  # type: ignore[arg-type]
        assert isinstance(res, GetResult)
        return res

    def depth(self, name: str) -> int:
        q = self.qm.objects.require(name)
        return q.messages.depth


def reason_of(excinfo: pytest.ExceptionInfo[MQError]) -> tuple[int, int]:
    return excinfo.value.comp, excinfo.value.reason
