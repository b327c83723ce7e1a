"""Put to a waiting getter, differentially: two queue managers take the same calls (waits of
every kind, puts, gets, commits, backouts, cancelled waits, time passing); in the second a
handle with a selection string watches the queue, which makes every put take the queued
path (insert, then wake). Every answer, delivery, report and depth must be the same.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions, Waiting
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

OPEN = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE
CORRELS = [b"", b"A", b"B"]
WAIT_KINDS = {
    "plain": C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT,
    "syncpoint": C.MQGMO_WAIT | C.MQGMO_SYNCPOINT,
    "browse": C.MQGMO_WAIT | C.MQGMO_BROWSE_NEXT,
    "lock": C.MQGMO_WAIT | C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK,
    "truncate": C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG,
}


def _outcome(r: Any) -> Any:
    """What a caller can see of a call's answer (a result, a wait, an error)."""
    if isinstance(r, GetResult):
        return ("got", r.md, r.md_bytes in (None, r.md.pack(version=2)), r.data, r.data_length, r.msg_token, r.comp,
                r.reason, r.sequence, None if r.properties is None else dict(r.properties.items()))
    if isinstance(r, Waiting):
        return ("waiting", r.waiter_id, r.deadline)
    if isinstance(r, MQError):
        return ("error", r.comp, r.reason)
    if r is None or isinstance(r, bool):  # commit, backout, tick; cancel_wait
        return r
    return ("put", r.md, r.comp, r.reason, r.sequence)


class HandoverVsQueued(RuleBasedStateMachine):
    @initialize(fifo=st.booleans())
    def setup(self, fifo: bool) -> None:
        self.sides = []
        for watched in (False, True):
            clock = FakeClock()
            qm = QueueManager.start("QM1", MemoryJournal(), clock)
            qm.objects.define("QLOCAL", "Q", {"MSGDLVSQ": "FIFO" if fifo else "PRIORITY", "MAXDEPTH": 1000})
            qm.objects.define("QLOCAL", "R", {})
            conns = [qm.connect(appl_name="t"), qm.connect(appl_name="t")]
            handles = [qm.open(c, ObjectDescriptor("Q"), OPEN).hobj for c in conns]
            reports = qm.open(conns[0], ObjectDescriptor("R"), OPEN).hobj
            if watched:  # opened last, so both sides number their other handles alike
                qm.open(conns[0], ObjectDescriptor("Q", selection_string="JMSPriority >= 0"), C.MQOO_BROWSE)
            self.sides.append((qm, clock, conns, handles, reports))
        self.waits: list[int] = []

    def _both(self, call: Any) -> Any:
        outs = []
        for side in self.sides:
            try:
                outs.append(_outcome(call(*side)))
            except MQError as exc:
                outs.append(_outcome(exc))
            outs.append([(d.waiter_id, d.sync_lsn, _outcome(d.result) if d.result else _outcome(d.error))
                         for d in side[0].take_deliveries()])
        assert outs[0:2] == outs[2:4]
        return outs[0]

    # Weighted towards what may be handed over (a plain wait, a non-persistent put without
    # expiry outside syncpoint to an empty queue), so that both paths are taken often.
    @rule(who=st.integers(0, 1), kind=st.sampled_from(["plain"] * 6 + sorted(WAIT_KINDS)), correl=st.sampled_from(CORRELS),
          msg_handle=st.booleans())
    def wait(self, who: int, kind: str, correl: bytes, msg_handle: bool) -> None:
        buffer = 2 if kind == "truncate" else 100
        gmo = GetOptions(WAIT_KINDS[kind], 60_000, C.MQMO_MATCH_CORREL_ID, msg_handle=msg_handle)
        out = self._both(lambda qm, _c, conns, hs, _r: qm.get(conns[who], hs[who], MQMD(correl_id=correl.ljust(24, b"\0")),
                                                              gmo, buffer))
        if out[0] == "waiting":
            self.waits.append(out[1])

    @rule(who=st.integers(0, 1), correl=st.sampled_from(CORRELS), persistence=st.sampled_from([0, 0, 0, 1]),
          priority=st.integers(0, 9), expiry=st.sampled_from([-1, -1, -1, 5, 50]),
          syncpoint=st.sampled_from([False, False, False, True]),
          report=st.sampled_from([0, C.MQRO_COA, C.MQRO_COD, C.MQRO_COA | C.MQRO_COD_WITH_DATA]),
          data=st.sampled_from([b"x", b"longer data"]))
    def put(self, who: int, correl: bytes, persistence: int, priority: int, expiry: int, syncpoint: bool, report: int,
            data: bytes) -> None:
        md = MQMD(correl_id=correl.ljust(24, b"\0"), persistence=persistence, priority=priority, expiry=expiry,
                  report=report, reply_to_q="R" if report else "")
        pmo = PutOptions(C.MQPMO_SYNCPOINT if syncpoint else C.MQPMO_NO_SYNCPOINT)
        self._both(lambda qm, _c, conns, hs, _r: qm.put(conns[who], hs[who], md, pmo, data))

    @rule(who=st.integers(0, 1), correl=st.sampled_from(CORRELS))
    def get(self, who: int, correl: bytes) -> None:
        gmo = GetOptions(C.MQGMO_NO_SYNCPOINT, 0, C.MQMO_MATCH_CORREL_ID if correl else C.MQMO_NONE)
        self._both(lambda qm, _c, conns, hs, _r: qm.get(conns[who], hs[who], MQMD(correl_id=correl.ljust(24, b"\0")),
                                                        gmo, 100))

    @rule(who=st.integers(0, 1), correl=st.sampled_from(CORRELS), put_correl=st.sampled_from(CORRELS),
          syncpoint=st.booleans(), report=st.sampled_from([0, C.MQRO_COA | C.MQRO_COD]), msg_handle=st.booleans())
    def wait_then_put(self, who: int, correl: bytes, put_correl: bytes, syncpoint: bool, report: int,
                      msg_handle: bool) -> None:
        self.wait(who, "syncpoint" if syncpoint else "plain", correl, msg_handle)
        self.put(1 - who, put_correl, 0, 0, -1, False, report, b"x")

    @rule(who=st.integers(0, 1))
    def drain(self, who: int) -> None:
        gmo = GetOptions(C.MQGMO_NO_SYNCPOINT, 0, C.MQMO_NONE)
        for _ in range(40):
            out = self._both(lambda qm, _c, conns, hs, _r: qm.get(conns[who], hs[who], MQMD(), gmo, 100))
            if out[0] == "error":
                break

    @rule(who=st.integers(0, 1), commit=st.booleans())
    def end_unit(self, who: int, commit: bool) -> None:
        self._both(lambda qm, _c, conns, _h, _r: (qm.commit if commit else qm.backout)(conns[who]))

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        if self.waits:
            wid = data.draw(st.sampled_from(self.waits))
            self._both(lambda qm, *_: qm.cancel_wait(wid))

    @rule(seconds=st.sampled_from([0.2, 1.0, 6.0]))
    def time_passes(self, seconds: float) -> None:
        for _, clock, *_ in self.sides:
            clock.advance(seconds)
        self._both(lambda qm, *_: qm.tick())

    @invariant()
    def same_queues(self) -> None:
        if not hasattr(self, "sides"):
            return
        seen = []
        for qm, _c, _conns, _h, reports in self.sides:
            depths = (qm.objects.require("Q").messages.depth, qm.objects.require("R").messages.depth)
            q, r = qm.objects.require("Q"), qm.objects.require("R")
            browse = [(m.seq, m.md, m.data) for m in sorted(q.messages.by_seq.values(), key=lambda m: m.key)]
            seen.append((depths, q.last_put, q.last_get, r.last_put, browse, sorted(qm.waiters), reports))
        assert seen[0] == seen[1]


HandoverVsQueued.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
TestHandoverVsQueued = HandoverVsQueued.TestCase
