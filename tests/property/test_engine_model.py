"""The engine against a simple model: put, get, browse, match, commit, backout, expiry.

The model is a list of messages kept in delivery order by sorting on (-priority, seq);
the engine must return exactly what the model predicts, with the same BackoutCount and
depth, whatever sequence of calls hypothesis tries.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


@dataclass
class M:
    seq: int
    priority: int
    data: bytes
    correl: bytes
    expires_at: float | None
    backout: int = 0


class EngineVsModel(RuleBasedStateMachine):
    @initialize(fifo=st.booleans())
    def setup(self, fifo: bool) -> None:
        self.clock = FakeClock()
        self.qm = QueueManager.start("QM1", MemoryJournal(), self.clock)
        self.qm.objects.define("QLOCAL", "Q", {"MSGDLVSQ": "FIFO" if fifo else "PRIORITY", "MAXDEPTH": 1000})
        self.fifo = fifo
        self.hconn = self.qm.connect()
        opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE
        self.hobj = self.qm.open(self.hconn, ObjectDescriptor("Q"), opts).hobj
        self.visible: list[M] = []
        self.pending_puts: list[M] = []
        self.pending_gets: list[M] = []
        self.seq = 0
        self.cursor: tuple[int, int] | None = None

    def key(self, m: M) -> tuple[int, int]:
        return (0 if self.fifo else -m.priority, m.seq)

    def ordered(self) -> list[M]:
        return sorted(self.visible, key=self.key)

    @rule(priority=st.integers(0, 9), data=st.binary(max_size=8), correl=st.sampled_from([b"", b"A", b"B"]),
          syncpoint=st.booleans(), expiry=st.sampled_from([-1, -1, 5, 30]))
    def put(self, priority: int, data: bytes, correl: bytes, syncpoint: bool, expiry: int) -> None:
        cid = correl.ljust(24, b"\0") if correl else bytes(24)
        md = MQMD(priority=priority, correl_id=cid, expiry=expiry)
        self.qm.put(self.hconn, self.hobj, md, PutOptions(C.MQPMO_SYNCPOINT if syncpoint else 0), data)
        self.seq += 1
        m = M(self.seq, priority, data, cid, None if expiry == -1 else self.clock.now() + expiry / 10)
        (self.pending_puts if syncpoint else self.visible).append(m)

    def expected(self, correl: bytes | None, after: tuple[int, int] | None) -> M | None:
        now = self.clock.now()
        for m in self.ordered():
            if after is not None and self.key(m) <= after:
                continue
            if correl is not None and m.correl != correl:
                continue
            if m.expires_at is not None and now >= m.expires_at:
                self.visible.remove(m)  # met by the search: discarded
                continue
            return m
        return None

    def call_get(self, options: int, correl: bytes | None) -> GetResult | None:
        md = MQMD(correl_id=correl or bytes(24))
        try:
            res = self.qm.get(self.hconn, self.hobj, md, GetOptions(options), 100)
        except MQError as exc:
            assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
            return None
        assert isinstance(res, GetResult)
        return res

    @rule(syncpoint=st.booleans(), correl=st.sampled_from([None, b"A", b"B"]))
    def get(self, syncpoint: bool, correl: bytes | None) -> None:
        cid = correl.ljust(24, b"\0") if correl else None
        want = self.expected(cid, None)
        res = self.call_get(C.MQGMO_SYNCPOINT if syncpoint else C.MQGMO_NO_SYNCPOINT, cid)
        if want is None:
            assert res is None
            return
        assert res is not None and res.data == want.data and res.md.backout_count == want.backout
        self.visible.remove(want)
        if syncpoint:
            self.pending_gets.append(want)

    @rule(first=st.booleans())
    def browse(self, first: bool) -> None:
        after = None if first else self.cursor
        want = self.expected(None, after)
        res = self.call_get(C.MQGMO_BROWSE_FIRST if first else C.MQGMO_BROWSE_NEXT, None)
        if want is None:
            assert res is None
            return
        assert res is not None and res.data == want.data
        self.cursor = self.key(want)

    @rule()
    def commit(self) -> None:
        self.qm.commit(self.hconn)
        self.visible.extend(self.pending_puts)
        self.pending_puts, self.pending_gets = [], []

    @rule()
    def backout(self) -> None:
        self.qm.backout(self.hconn)
        for m in self.pending_gets:
            m.backout += 1
            self.visible.append(m)
        self.pending_puts, self.pending_gets = [], []

    @rule(seconds=st.sampled_from([0.5, 1.0, 4.0]))
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @invariant()
    def depth_matches(self) -> None:
        if not hasattr(self, "qm"):
            return
        q = self.qm.objects.require("Q")
        assert q.messages.depth == len(self.visible) + len(self.pending_puts) + len(self.pending_gets)


EngineVsModel.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestEngineVsModel = EngineVsModel.TestCase
