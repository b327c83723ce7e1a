"""Selective gets and browses against a model: filter a reference list with the selector's
Python twin, in delivery order. Whatever mix of puts, selective and plain gets, browses,
re-opens, commits and backouts hypothesis tries, the engine returns what the model says."""

from __future__ import annotations

from collections.abc import Callable
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
    n: int | None
    colour: str | None
    backout: int = 0


def _n(m: M, test: Callable[[int], bool]) -> bool:
    return m.n is not None and test(m.n)


# Each selection string with the Python predicate that is TRUE exactly when it is (a
# message whose selector is FALSE or unknown is not selected).
SELECTORS: list[tuple[str, Callable[[M], bool]]] = [
    ("n > 5", lambda m: _n(m, lambda n: n > 5)),
    ("colour = 'red' OR n < 2", lambda m: m.colour == "red" or _n(m, lambda n: n < 2)),
    ("colour IS NULL", lambda m: m.colour is None),
    ("Root.MQMD.BackoutCount > 0 OR n BETWEEN 3 AND 6", lambda m: m.backout > 0 or _n(m, lambda n: 3 <= n <= 6)),
    ("NOT colour = 'blue' AND JMSPriority >= 4", lambda m: m.colour not in (None, "blue") and m.priority >= 4),
    ("n * 2 - 3 <> 7 AND usr.colour IN ('red', 'green')",
     lambda m: _n(m, lambda n: n * 2 - 3 != 7) and m.colour in ("red", "green")),
]


class SelectionVsModel(RuleBasedStateMachine):
    @initialize(fifo=st.booleans(), which=st.integers(0, len(SELECTORS) - 1))
    def setup(self, fifo: bool, which: int) -> None:
        self.qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
        self.qm.objects.define("QLOCAL", "Q", {"MSGDLVSQ": "FIFO" if fifo else "PRIORITY", "MAXDEPTH": 10_000})
        self.fifo = fifo
        self.hconn = self.qm.connect()
        self.plain = self.qm.open(self.hconn, ObjectDescriptor("Q"), C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT).hobj
        self.visible: list[M] = []
        self.uow_puts: list[M] = []
        self.uow_gets: list[M] = []
        self.seq = 0
        self.getter = self.browser = 0
        self.reopen(which)

    def _open(self, text: str, options: int) -> int:
        return self.qm.open(self.hconn, ObjectDescriptor("Q", selection_string=text), options).hobj

    @rule(which=st.integers(0, len(SELECTORS) - 1))
    def reopen(self, which: int) -> None:
        """New selecting handles (their views start from the queue as it is now)."""
        for hobj in (self.getter, self.browser):
            if hobj:
                self.qm.close(self.hconn, hobj)
        text, self.pred = SELECTORS[which]
        self.getter = self._open(text, C.MQOO_INPUT_SHARED)
        self.browser = self._open(text, C.MQOO_BROWSE)

    def ordered(self, pred: Callable[[M], bool] = lambda m: True) -> list[M]:
        key = (lambda m: m.seq) if self.fifo else (lambda m: (-m.priority, m.seq))
        return sorted((m for m in self.visible if pred(m)), key=key)

    def _get(self, hobj: int, options: int) -> bytes | None:
        try:
            r = self.qm.get(self.hconn, hobj, MQMD(), GetOptions(options, 0, 0, msg_handle=True), 1024)
        except MQError as exc:
            assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
            return None
        assert isinstance(r, GetResult)
        return r.data

    @rule(priority=st.integers(0, 9), n=st.one_of(st.none(), st.integers(0, 9)),
          colour=st.sampled_from([None, "red", "blue", "green"]), syncpoint=st.booleans())
    def put(self, priority: int, n: int | None, colour: str | None, syncpoint: bool) -> None:
        self.seq += 1
        m = M(self.seq, priority, n, colour)
        props = {k: v for k, v in (("n", n), ("colour", colour)) if v is not None}
        pmo = PutOptions(C.MQPMO_SYNCPOINT if syncpoint else C.MQPMO_NO_SYNCPOINT)
        self.qm.put(self.hconn, self.plain, MQMD(priority=priority), pmo, str(m.seq).encode(), props or None)
        (self.uow_puts if syncpoint else self.visible).append(m)

    def _take(self, hobj: int, pred: Callable[[M], bool], syncpoint: bool) -> None:
        expected = self.ordered(pred)
        got = self._get(hobj, C.MQGMO_SYNCPOINT if syncpoint else C.MQGMO_NO_SYNCPOINT)
        if not expected:
            assert got is None
            return
        m = expected[0]
        assert got == str(m.seq).encode()
        self.visible.remove(m)
        if syncpoint:
            self.uow_gets.append(m)

    @rule(syncpoint=st.booleans())
    def get_selected(self, syncpoint: bool) -> None:
        self._take(self.getter, self.pred, syncpoint)

    @rule(syncpoint=st.booleans())
    def get_plain(self, syncpoint: bool) -> None:
        self._take(self.plain, lambda m: True, syncpoint)

    @rule()
    def browse_selected(self) -> None:
        seen, opts = [], C.MQGMO_BROWSE_FIRST
        while (data := self._get(self.browser, opts)) is not None:
            seen.append(data)
            opts = C.MQGMO_BROWSE_NEXT
        assert seen == [str(m.seq).encode() for m in self.ordered(self.pred)]

    @rule()
    def commit(self) -> None:
        self.qm.commit(self.hconn)
        self.visible += self.uow_puts
        self.uow_puts, self.uow_gets = [], []

    @rule()
    def backout(self) -> None:
        self.qm.backout(self.hconn)
        for m in self.uow_gets:
            m.backout += 1
        self.visible += self.uow_gets
        self.uow_puts, self.uow_gets = [], []

    @invariant()
    def depth(self) -> None:
        q = self.qm.objects.require("Q")
        assert len(q.messages) == len(self.visible)


SelectionVsModel.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_selection_matches_model = SelectionVsModel.TestCase
