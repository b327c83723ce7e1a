"""FileJournal on a full disk: a small tmpfs made by the test (root only; CI runs as root).

Below the reserve the journal refuses persistent work before any write fails; a write that
finds no space anyway (ENOSPC) is cut back to the segment's durable end and raises
JournalFull, and the same batch written again once space is back makes everything durable;
a failed fsync stays final whatever its errno.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ferrymq.cli.home import DEFAULT_DISK_RESERVE
from ferrymq.errors import JournalFull, StoreError
from ferrymq.store import space
from ferrymq.store.file import DEFAULT_RESERVE, FileJournal
from ferrymq.store.journal import Pending

KiB = 1024


@pytest.fixture
def disk(small_tmpfs: Callable[[str], Path]) -> Path:
    """A 1 MiB tmpfs, unmounted afterwards."""
    return small_tmpfs("1m")


def fill(path: Path) -> None:
    """Take every free byte of the filesystem with a ballast file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        with contextlib.suppress(OSError):
            for chunk in (64 * KiB, 4 * KiB, 512, 1):
                while True:
                    try:
                        os.write(fd, b"b" * chunk)
                    except OSError as exc:
                        assert exc.errno == errno.ENOSPC
                        break
    finally:
        os.close(fd)


def segment_sizes(d: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(d.glob("*.seg"))}


def refused_batch(j: FileJournal, disk: Path, record_id: int, payload: bytes) -> Pending:
    """Fill the disk, stage ``payload`` as a record and see its batch's write refused."""
    fill(disk / "ballast")
    j.add(record_id, 1, payload)
    pending = j.take_pending()
    assert pending is not None
    with pytest.raises(JournalFull):
        j.write_pending(pending)
    return pending


def test_below_the_reserve_persistent_work_is_refused_before_a_write_fails(disk: Path) -> None:
    j = FileJournal(disk / "j", reserve_bytes=200 * KiB)
    j.load()
    assert j.refusal == "" and j.stats().state == space.HEALTHY
    rid = 0
    while not j.refusal:
        rid += 1
        j.add(rid, 1, bytes([rid % 256]) * 10 * KiB)
        j.sync()  # never raises: the refusal comes first
    stats = j.stats()
    assert stats.state == space.LOW_SPACE
    assert str(200 * KiB) in j.refusal and "disk_reserve_bytes" in j.refusal
    assert 0 <= stats.free_bytes < 200 * KiB + 11 * KiB
    # Operations are still taken (a get's delete, a commit) and fit in the reserve.
    j.delete(1)
    j.sync()
    j.check_space()
    j.refresh()
    assert j.stats().state == space.LOW_SPACE  # nothing was freed
    j.close()
    smaller = FileJournal(disk / "j", reserve_bytes=100 * KiB)  # a smaller reserve: room again
    assert len(smaller.load().records) == rid - 1
    assert smaller.refusal == "" and smaller.stats().state == space.HEALTHY
    smaller.close()


def test_enospc_cuts_the_segment_back_and_the_same_batch_is_written_once_space_is_back(disk: Path) -> None:
    j = FileJournal(disk / "j", reserve_bytes=0)
    j.load()
    for rid in range(1, 4):
        j.add(rid, 1, b"d" * 10 * KiB)
        j.sync()
    durable = segment_sizes(disk / "j")
    pending = refused_batch(j, disk, 4, b"x" * 100 * KiB)
    assert segment_sizes(disk / "j") == durable  # no half batch left behind
    j.refresh()
    assert j.stats().state == space.DISK_FULL and "No space" in j.refusal
    j.add(5, 1, b"y")  # accepted while full; durable only after the batch before it
    later = j.take_pending()
    assert later is not None
    with pytest.raises(StoreError, match="must be written first"):
        j.write_pending(later)  # order is kept
    with pytest.raises(JournalFull):
        j.write_pending(pending)  # still no room
    (disk / "ballast").unlink()
    j.write_pending(pending)
    j.mark_durable(pending.lsn)
    j.write_pending(later)
    j.mark_durable(later.lsn)
    assert j.refusal == "" and j.stats().state == space.HEALTHY and j.durable_lsn == later.lsn
    j.close()
    again = FileJournal(disk / "j")
    loaded = again.load()
    assert [r.record_id for r in loaded.records] == [1, 2, 3, 4, 5]
    assert loaded.torn_bytes == 0 and loaded.bad_records == 0
    again.close()


def test_a_new_segment_that_finds_no_space_is_created_again(disk: Path) -> None:
    j = FileJournal(disk / "j", segment_size=16 * KiB, reserve_bytes=0)
    j.load()
    j.add(1, 1, b"a" * 20 * KiB)
    j.sync()  # segment 1 is now past its size: the next batch starts segment 2
    pending = refused_batch(j, disk, 2, b"b" * 20 * KiB)
    assert sorted(segment_sizes(disk / "j").values())[0] == 0  # created, cut back to nothing
    (disk / "ballast").unlink()
    j.write_pending(pending)
    j.mark_durable(pending.lsn)
    j.close()
    again = FileJournal(disk / "j")
    assert [r.record_id for r in again.load().records] == [1, 2]
    again.close()


def test_closing_while_a_batch_did_not_fit_keeps_what_was_durable(disk: Path) -> None:
    j = FileJournal(disk / "j", reserve_bytes=0)
    j.load()
    j.add(1, 1, b"kept")
    j.sync()
    refused_batch(j, disk, 2, b"z" * 50 * KiB)
    with pytest.raises(StoreError, match="never acknowledged"):
        j.close()
    (disk / "ballast").unlink()
    again = FileJournal(disk / "j")
    loaded = again.load()
    assert [r.record_id for r in loaded.records] == [1] and loaded.torn_bytes == 0
    again.close()


def test_a_failed_fsync_is_final_even_with_enospc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    j = FileJournal(tmp_path / "j")
    j.load()
    j.add(1, 0, b"a")
    pending = j.take_pending()
    assert pending is not None

    def fail(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdatasync", fail)
    with pytest.raises(StoreError) as e:
        j.write_pending(pending)
    assert not isinstance(e.value, JournalFull)
    monkeypatch.undo()
    j.refresh()
    assert j.stats().state == space.FAILED and "restart" in j.refusal
    with pytest.raises(StoreError, match="earlier journal write failed"):
        j.write_pending(pending)
    j.close()


def test_the_command_lines_default_reserve_is_the_journals() -> None:
    assert DEFAULT_DISK_RESERVE == DEFAULT_RESERVE
