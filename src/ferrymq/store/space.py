"""L1: the file journal's view of its disk — free space, the reserve, and which failed
writes a journal survives.

A journal's health is one of four states (``JournalStats.state``):

- ``healthy`` — it takes persistent work.
- ``low_space`` — the filesystem's free space, less the bytes appended but not yet
  written, is below the reserve: new persistent messages are refused (the engine answers
  MQRC_RESOURCE_PROBLEM) before anything is staged, while what needs little room (the
  deletes of gets, commits, backouts) still goes to disk inside the reserve.
- ``disk_full`` — a write failed with ENOSPC or EDQUOT (the disk filled faster than the
  reserve allowed for, e.g. another program wrote to it): the segment was cut back to its
  last durable byte, the batch is kept, and the driver writes it again until it fits.
- ``failed`` — any other failure (EIO, a failed fsync or truncate): after a failed fsync
  the state of the page cache is unknown (the "fsyncgate" lesson), so nothing written from
  then on could be trusted; the journal takes nothing more until a restart.

Free space is what an unprivileged process may use (``f_bavail``): a root-owned server
leaves the filesystem's root reserve alone.
"""

from __future__ import annotations

import errno
import os
from typing import Final

HEALTHY: Final = "healthy"
LOW_SPACE: Final = "low_space"
DISK_FULL: Final = "disk_full"
FAILED: Final = "failed"

RECOVERABLE_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
"""A write that failed with one of these wrote nothing that counts, and may be tried again."""


def free_bytes(target: int | os.PathLike[str] | str) -> int:
    """Bytes an unprivileged writer may still use on the filesystem of ``target`` (a file
    descriptor or a path)."""
    st = os.fstatvfs(target) if isinstance(target, int) else os.statvfs(target)
    return st.f_bavail * st.f_frsize


def low_space_refusal(free: int, unwritten: int, reserve: int) -> str:
    return (f"the journal's disk has {free} bytes free ({unwritten} more waiting to be written), below the "
            f"journal's reserve of {reserve} bytes (disk_reserve_bytes): persistent messages are refused "
            "until space is freed")


def disk_full_refusal(error: str) -> str:
    return (f"the journal's disk is full ({error}): persistent messages are refused until space is freed; "
            "the batch that did not fit is written again every second")


def failed_refusal(error: str) -> str:
    return f"the journal failed ({error}) and takes no more writes: restart the queue manager"
