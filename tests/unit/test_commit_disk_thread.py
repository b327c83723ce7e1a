"""The group committer's disk thread (server/commit.py ``DiskThread``): results and
exceptions come back to the awaiting task, calls run in order in one thread, a task
cancelled while its call runs leaves nothing behind, and ``shutdown`` finishes the calls
given before the thread ends."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ferrymq.server.commit import DiskThread


def test_results_and_errors_come_back_in_order_from_one_thread() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        disk = DiskThread()
        seen: list[tuple[int, str]] = []

        def work(n: int) -> int:
            seen.append((n, threading.current_thread().name))
            return n * 2

        def fail() -> None:
            raise OSError(5, "EIO")

        try:
            assert await asyncio.gather(*(disk.call(loop, work, n) for n in range(50))) == [n * 2 for n in range(50)]
            with pytest.raises(OSError, match="EIO"):
                await disk.call(loop, fail)
            assert await disk.call(loop, work, 7) == 14  # a failure does not end the thread
        finally:
            disk.shutdown()
        assert [n for n, _ in seen] == [*range(50), 7]
        assert {name for _, name in seen} == {"ferrymq-fsync"}
        assert threading.current_thread().name != "ferrymq-fsync"

    asyncio.run(main())


def test_a_cancelled_wait_is_left_alone_and_shutdown_finishes_the_calls_given() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        disk = DiskThread()
        done: list[int] = []

        def slow(n: int) -> int:
            time.sleep(0.05)
            done.append(n)
            return n

        first = asyncio.ensure_future(disk.call(loop, slow, 1))
        second = disk.call(loop, slow, 2)
        await asyncio.sleep(0.01)
        first.cancel()
        assert await second == 2  # the cancelled call's late answer raised nothing
        disk.call(loop, slow, 3)
        disk.shutdown()  # blocks until call 3 ran
        assert done == [1, 2, 3]
        await asyncio.sleep(0)  # the answer to the call nobody awaits is dropped quietly

    asyncio.run(main())
