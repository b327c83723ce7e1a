"""server.deadlines: the waits' timeouts on one loop timer, on a real event loop."""

from __future__ import annotations

import asyncio

from ferrymq.server.deadlines import SLACK, Deadlines


def test_each_live_wait_expires_once_in_deadline_order_never_early() -> None:
    async def main() -> list[tuple[int, bool]]:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        expired: list[tuple[int, bool]] = []
        due: dict[int, float] = {}

        def expire(wid: int) -> None:
            expired.append((wid, loop.time() >= due[wid] - SLACK))
            if len(expired) == 3:
                done.set_result(None)

        d = Deadlines(expire)
        for wid, timeout in ((1, 0.06), (2, 0.02), (3, 0.04), (4, 0.01), (5, 0.03)):
            due[wid] = loop.time() + timeout
            d.add(wid, timeout)
        d.discard(4)  # answered: the timer armed for it finds nothing due
        d.discard(5)
        await asyncio.wait_for(done, 10)
        await asyncio.sleep(0.05)  # nothing further comes
        assert len(d) == 0
        d.close()
        return expired

    assert asyncio.run(main()) == [(2, True), (3, True), (1, True)]


def test_dead_entries_do_not_pile_up_and_an_earlier_deadline_rearms() -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        expired: list[int] = []
        done = loop.create_future()

        def expire(wid: int) -> None:
            expired.append(wid)
            done.set_result(None)

        d = Deadlines(expire)
        for wid in range(1, 5001):  # long waits, nearly all answered at once
            d.add(wid, 3600)
            if wid > 3:
                d.discard(wid)
        assert len(d) == 3 and len(d._heap) <= 2 * 3 + 1024 + 1
        d.add(9999, 0.01)  # sooner than the armed timer
        await asyncio.wait_for(done, 10)
        d.close()
        return expired

    assert asyncio.run(main()) == [9999]
