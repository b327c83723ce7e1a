"""MQPUT's kept plan (engine.putplan) and MQGET's kept checks, differentially: two queue
managers take the same calls (puts of varied descriptors and options through a queue and an
alias, waits, gets, units of work, changes to the queue's, the alias's and the queue
manager's attributes, quiescing); in the second every plan is made stale before each call,
so every put and get there is worked out from scratch; the first side may be given the
descriptors in their bytes (put_raw), the second decoded. Every answer, delivery, report,
stored descriptor and depth must be the same.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions, Waiting
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

OPEN = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE | C.MQOO_SET_ALL_CONTEXT
PMOS = [C.MQPMO_NO_SYNCPOINT] * 5 + [C.MQPMO_SYNCPOINT, C.MQPMO_NO_SYNCPOINT | C.MQPMO_NEW_MSG_ID,
        C.MQPMO_NEW_CORREL_ID, C.MQPMO_FAIL_IF_QUIESCING, C.MQPMO_SET_ALL_CONTEXT, C.MQPMO_NO_CONTEXT]
ALTERS: list[tuple[str, dict[str, object]]] = [
    ("Q", {"PUT": "DISABLED"}), ("Q", {"PUT": "ENABLED"}), ("Q", {"GET": "DISABLED"}), ("Q", {"GET": "ENABLED"}),
    ("Q", {"DEFPRTY": 7}), ("Q", {"DEFPRTY": 0}), ("Q", {"DEFPSIST": "YES"}), ("Q", {"DEFPSIST": "NO"}),
    ("Q", {"MAXMSGL": 4}), ("Q", {"MAXMSGL": 1000}), ("Q", {"MAXDEPTH": 2}), ("Q", {"MAXDEPTH": 1000}),
    ("Q", {"MSGDLVSQ": "FIFO"}), ("Q", {"MSGDLVSQ": "PRIORITY"}), ("Q", {"PROPCTL": "V6COMPAT"}),
    ("Q", {"PROPCTL": "COMPAT"}), ("A", {"PUT": "DISABLED"}), ("A", {"PUT": "ENABLED"}), ("A", {"DEFPRTY": 3}),
    ("A", {"DEFPSIST": "YES"}), ("A", {"DEFPSIST": "NO"}),
]
QMGR_ALTERS: list[dict[str, object]] = [{"MAXMSGL": 32768}, {"MAXMSGL": 4 * 1024 * 1024}, {"MAXUMSGS": 2},
                                        {"MAXUMSGS": 10000}]
RESTORE: dict[str, object] = {"PUT": "ENABLED", "PROPCTL": "COMPAT", "MAXDEPTH": 1000, "MAXMSGL": 4 * 1024 * 1024}
BIG = bytes(40_000)  # over the queue manager's lowest MAXMSGL
# A byte of a descriptor's bytes changed (not StrucId or Version): anywhere, or where any
# value is a valid one that the stored descriptor keeps (ReplyToQ, ReplyToQMgr, version 2's
# fields; the context fields between are the queue manager's to set).
DAMAGE = st.tuples(st.integers(8, 363) | st.integers(96, 191) | st.integers(324, 363), st.integers(0, 255))


def _outcome(r: Any) -> Any:
    """What a caller can see of a call's answer (a result, a wait, an error)."""
    if isinstance(r, GetResult):
        return ("got", r.md, r.md_bytes in (None, r.md.pack(version=2)), r.data, r.data_length, r.msg_token, r.comp,
                r.reason, r.sequence)
    if isinstance(r, Waiting):
        return ("waiting", r.waiter_id, r.deadline)
    if isinstance(r, MQError):
        return ("error", r.comp, r.reason)
    if r is None:
        return r
    return ("put", r.md, r.comp, r.reason, r.sequence, r.resolved_q_name)


class PlannedVsFresh(RuleBasedStateMachine):
    # form: how the first side is given the descriptors: decoded (None), or in their bytes
    # (put_raw) in this form.
    @initialize(form=st.sampled_from([None, None, "v2", "v2", "v1", "big-endian"]))
    def setup(self, form: str | None) -> None:
        self.form = form
        self.sides = []
        for _ in range(2):
            clock = FakeClock()
            qm = QueueManager.start("QM1", MemoryJournal(), clock)
            qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": 1000})
            qm.objects.define("QALIAS", "A", {"TARGET": "Q"})
            qm.objects.define("QLOCAL", "R", {})
            conns = [qm.connect(appl_name="t", user="u1"), qm.connect(appl_name="other", user="u2")]
            handles = [qm.open(c, ObjectDescriptor(name), OPEN).hobj for c in conns for name in ("Q", "A")]
            self.sides.append((qm, clock, conns, handles))
        self.last: tuple[int, MQMD, int] | None = None

    def _both(self, call: Any) -> Any:
        outs = []
        for n, (qm, _clock, conns, handles) in enumerate(self.sides):
            if n == 1:
                qm.objects.epoch += 1  # every plan stale: this side puts and gets the long way
            try:
                outs.append(_outcome(call(qm, conns, handles)))
            except MQError as exc:
                outs.append(_outcome(exc))
            outs.append([(d.waiter_id, d.sync_lsn, _outcome(d.result) if d.result else _outcome(d.error))
                         for d in qm.take_deliveries()])
        assert outs[0:2] == outs[2:4]
        return outs[0]

    # Weighted towards the same descriptor and options again (a plan that is used).
    @rule(who=st.integers(0, 3), priority=st.sampled_from([-1] * 4 + [4, 12]),
          persistence=st.sampled_from([2] * 4 + [0, 1]), expiry=st.sampled_from([-1] * 5 + [50]),
          report=st.sampled_from([0] * 6 + [C.MQRO_COA, C.MQRO_COD, 0x40000000]),
          msg_id=st.sampled_from([b"", b"", b"M"]), correl=st.sampled_from([b"", b"A", b"B"]),
          fmt=st.sampled_from([""] * 5 + ["MQSTR", "MQHRF2"]), pmo=st.sampled_from(PMOS),
          data=st.sampled_from([b"x", b"x", b"longer data"]), msg_type=st.sampled_from([8] * 6 + [1, 99]))
    def put(self, who: int, priority: int, persistence: int, expiry: int, report: int, msg_id: bytes, correl: bytes,
            fmt: str, pmo: int, data: bytes, msg_type: int) -> None:
        md = MQMD(version=2, msg_id=msg_id.ljust(24, b"\0"), correl_id=correl.ljust(24, b"\0"), priority=priority,
                  persistence=persistence, expiry=expiry, report=report, format=fmt, msg_type=msg_type,
                  reply_to_q="R" if report or msg_type == 1 else "", user_identifier="set", put_date="20200101",
                  put_time="12000000")
        if self._put(who, md, pmo, data)[0] == "put":
            self.last = (who, md, pmo)

    def _put(self, who: int, md: MQMD, pmo: int, data: bytes, damage: tuple[int, int] | None = None) -> Any:
        options = PutOptions(pmo)
        shape = self.form
        if shape is None:
            return self._both(lambda qm, conns, hs: qm.put(conns[who // 2], hs[who], md, options, data))
        raw = bytearray(md.pack(version=1 if shape == "v1" else 2, big_endian=shape == "big-endian"))
        if damage is not None:
            at, value = damage
            raw[8 + (at - 8) % (len(raw) - 8)] = value
        decoded = MQMD.unpack_from(raw)

        def put(qm: QueueManager, conns: list[int], hs: list[int]) -> Any:
            if qm is self.sides[0][0]:  # the plan may cover the bytes: not decoded then
                return qm.put_raw(conns[who // 2], hs[who], bytes(raw), pmo, 0, data)
            return qm.put(conns[who // 2], hs[who], decoded, options, data)

        return self._both(put)

    # A plan is kept for the same handle, options and descriptor but the identifiers: again
    # and again, with attributes changing in between.
    @rule(msg_id=st.sampled_from([b"", b"N"]), correl=st.sampled_from([b"", b"A", b"C"]),
          data=st.sampled_from([b"y", b"longer data", BIG]), times=st.integers(1, 3),
          change=st.sampled_from([None] * 4 + [*ALTERS, *QMGR_ALTERS, "quiesce", "inhibit", "allow"]),
          restore=st.booleans(), damage=st.one_of(st.none(), st.none(), DAMAGE),
          put_time=st.sampled_from(["12000000", "12000001", "235959"]))
    def put_again(self, msg_id: bytes, correl: bytes, data: bytes, times: int, change: Any, restore: bool,
                  damage: tuple[int, int] | None, put_time: str) -> None:
        if self.last is None:
            return
        who, md, pmo = self.last
        # PutTime too: with MQPMO_SET_ALL_CONTEXT the stored one is the descriptor's, plan or not
        md = md.replace(msg_id=msg_id.ljust(24, b"\0"), correl_id=correl.ljust(24, b"\0"), put_time=put_time)
        self._put(who, md, pmo, data)
        if isinstance(change, tuple):
            self.alter(change)
        elif isinstance(change, dict):
            self.alter_qmgr(change)
        elif change == "quiesce":
            self.quiesce()
        elif change is not None:
            self.mqset(change == "inhibit")
        for _ in range(times):  # perhaps a byte changed: the same descriptor but for one field
            self._put(who, md, pmo, data, damage)
        if restore:  # and back: a plan made under the change must not outlive it either
            self.alter(("Q", RESTORE))
            self._put(who, md, pmo, data)

    @rule(who=st.integers(0, 1), correl=st.sampled_from([b"", b"A"]), syncpoint=st.booleans())
    def wait(self, who: int, correl: bytes, syncpoint: bool) -> None:
        gmo = GetOptions(C.MQGMO_WAIT | (C.MQGMO_SYNCPOINT if syncpoint else C.MQGMO_NO_SYNCPOINT), 60_000,
                         C.MQMO_MATCH_CORREL_ID)
        self._both(lambda qm, conns, hs: qm.get(conns[who], hs[2 * who], MQMD(correl_id=correl.ljust(24, b"\0")),
                                                gmo, 100))

    @rule(who=st.integers(0, 1))
    def get(self, who: int) -> None:
        gmo = GetOptions(C.MQGMO_NO_SYNCPOINT, 0, C.MQMO_NONE)
        self._both(lambda qm, conns, hs: qm.get(conns[who], hs[2 * who], MQMD(), gmo, 100))

    @rule(who=st.integers(0, 1), commit=st.booleans())
    def end_unit(self, who: int, commit: bool) -> None:
        self._both(lambda qm, conns, _h: (qm.commit if commit else qm.backout)(conns[who]))

    @rule(change=st.sampled_from(ALTERS))
    def alter(self, change: tuple[str, dict[str, object]]) -> None:
        self._both(lambda qm, _c, _h: qm.objects.alter(*change) and None)

    @rule(change=st.sampled_from(QMGR_ALTERS))
    def alter_qmgr(self, change: dict[str, object]) -> None:
        self._both(lambda qm, _c, _h: qm.objects.alter_qmgr(change))

    @rule(inhibit=st.booleans())
    def mqset(self, inhibit: bool) -> None:
        value = C.MQQA_PUT_INHIBITED if inhibit else C.MQQA_PUT_ALLOWED
        self._both(lambda qm, conns, _h: qm.set(conns[0], qm.open(conns[0], ObjectDescriptor("Q"), C.MQOO_SET).hobj,
                                                {C.MQIA_INHIBIT_PUT: value}, {}))

    def quiesce(self) -> None:  # for good: only now and then, after a put (put_again)
        self._both(lambda qm, _c, _h: qm.quiesce())

    @invariant()
    def same_queues(self) -> None:
        if not hasattr(self, "sides"):
            return
        seen = []
        for qm, _clock, _conns, _h in self.sides:
            q, r = qm.objects.require("Q"), qm.objects.require("R")
            held = [(m.seq, m.md, m.md_bytes(), m.data) for m in sorted(q.messages.by_seq.values(), key=lambda m: m.key)]
            seen.append((q.messages.depth, r.messages.depth, q.last_put, q.last_get, held, sorted(qm.waiters)))
        assert seen[0] == seen[1]


PlannedVsFresh.TestCase.settings = settings(max_examples=200, stateful_step_count=30, deadline=None)
TestPlannedVsFresh = PlannedVsFresh.TestCase


@settings(max_examples=300, deadline=None)
@given(priority=st.sampled_from([-1, 4, 12]), persistence=st.sampled_from([2, 0, 1]), report=st.sampled_from([0, C.MQRO_COA]),
       reply_to_q=st.sampled_from(["", "R", "R" * 48]), reply_to_q_mgr=st.sampled_from(["", "QM1", "X" * 48]),
       group_id=st.binary(min_size=24, max_size=24), form=st.sampled_from(["v2", "v1", "big-endian"]),
       pmo=st.sampled_from(PMOS), changes=st.lists(st.tuples(st.integers(8, 363), st.integers(0, 255)), max_size=4))
def test_a_descriptor_in_bytes_is_put_as_decoded(priority: int, persistence: int, report: int, reply_to_q: str,
                                                 reply_to_q_mgr: str, group_id: bytes, form: str, pmo: int,
                                                 changes: list[tuple[int, int]]) -> None:
    """put_raw of a descriptor's bytes, then of the same bytes with one byte changed (not its
    StrucId or Version), one change after another: the results, errors and queue are put's of
    the decoded descriptors on a queue manager whose plans are always stale."""
    md = MQMD(version=2, priority=priority, persistence=persistence, report=report, reply_to_q=reply_to_q,
              reply_to_q_mgr=reply_to_q_mgr, group_id=group_id, format="MQSTR")
    raw = bytearray(md.pack(version=1 if form == "v1" else 2, big_endian=form == "big-endian"))
    sides = []
    for _ in range(2):
        qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
        qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": 1000})
        qm.objects.define("QLOCAL", "R", {})
        conn = qm.connect(appl_name="t", user="u1")
        sides.append((qm, conn, qm.open(conn, ObjectDescriptor("Q"), OPEN).hobj))
    outs: list[list[Any]] = [[], []]
    for change in [None, None, *changes, None]:
        if change is not None:
            at, value = change
            raw[8 + (at - 8) % (len(raw) - 8)] = value
        for n, (qm, conn, hobj) in enumerate(sides):
            try:
                if n == 0:
                    r = qm.put_raw(conn, hobj, bytes(raw), pmo, 0, b"data")
                else:
                    qm.objects.epoch += 1
                    r = qm.put(conn, hobj, MQMD.unpack_from(raw), PutOptions(pmo), b"data")
            except MQError as exc:
                r = exc
            outs[n].append(_outcome(r))
    assert outs[0] == outs[1]
    held = [[(m.md, m.md_bytes()) for m in sorted(qm.objects.require("Q").messages.by_seq.values(), key=lambda m: m.key)]
            for qm, _, _ in sides]
    assert held[0] == held[1]
