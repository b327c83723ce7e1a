"""The benchmark runner's order of runs: contenders take turns, so that a change in the
machine's load during a scenario is shared by all of them rather than falling on one."""

from __future__ import annotations

from typing import Any

from ferrymq.bench.contender import REQUEST_REPLY, Contender
from ferrymq.bench.runner import Run, Runner


class _Named(Contender):
    kinds = frozenset({REQUEST_REPLY})

    def __init__(self, name: str, skipped: str | None = None) -> None:
        self.name = self.system = self.client = name
        self._skipped = skipped

    def unavailable(self) -> str | None:
        return self._skipped

    def start(self, ctx: Any) -> None:
        pass


def test_contenders_take_turns_and_a_skipped_one_is_left_out() -> None:
    order: list[str] = []
    contenders = [_Named("a"), _Named("b"), _Named("gone", skipped="not running"), _Named("c")]
    runner = Runner(list(contenders))

    def once(c: Contender) -> Run:
        order.append(c.name)
        return Run(rate=float(len(order)))

    entries = runner._each(REQUEST_REPLY, "request/reply", 3, None, once)

    assert order == ["a", "b", "c"] * 3
    assert [e.contender for e in entries] == ["a", "b", "gone", "c"]
    assert [len(e.runs) for e in entries] == [3, 3, 0, 3]
    assert entries[2].skipped == "not running"
    assert [r.rate for r in entries[1].runs] == [2.0, 5.0, 8.0]  # b's runs, in its turns
