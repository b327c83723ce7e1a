"""What a starting queue manager tells while its journal replays, and once it has.

Replaying a large journal takes a while (a million messages, some ten seconds): the server
process reports progress every second (``event=recovering`` in its log, and a progress line
on the notify pipe that ``ferrymq start`` prints), then what it recovered — live journal
records, messages, in-doubt units of work — and whether the last run ended in a crash
(``event=recovered``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from ferrymq.engine.qmgr import QueueManager
from ferrymq.store.journal import Journal

log = logging.getLogger("ferrymq.cli")

INTERVAL = 1.0  # seconds between progress reports


def _bytes_in(directory: Path) -> int:
    try:
        return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    except OSError:
        return 0


class Recovery:
    """``with Recovery(...) as r: open the engine`` reports progress; ``r.done(qm, journal)``
    the outcome. ``tell(doc)`` hears each report (the launcher's notify pipe)."""

    def __init__(self, name: str, journal_dir: Path, after: str, tell: Callable[[dict[str, Any]], None]) -> None:
        self.name = name
        self.after = after  # "crash", "end" (a normal or immediate stop) or "create"
        self.tell = tell
        self.journal_bytes = _bytes_in(journal_dir)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="ferrymq-recovery", daemon=True)
        self._t0 = time.monotonic()

    def __enter__(self) -> Recovery:
        self._t0 = time.monotonic()
        self._report("recovering")
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _tick(self) -> None:
        while not self._stop.wait(INTERVAL):
            self._report("recovering")

    def _report(self, phase: str, **extra: Any) -> dict[str, Any]:
        doc = {"phase": phase, "seconds": round(time.monotonic() - self._t0, 3),
               "journal_bytes": self.journal_bytes, "after": self.after, **extra}
        if phase == "recovering":
            log.info("event=recovering qmgr=%s seconds=%.1f journal_bytes=%d", self.name, doc["seconds"],
                     self.journal_bytes)
        self.tell(doc)
        return doc

    def done(self, qm: QueueManager, journal: Journal) -> dict[str, Any]:
        """Log and report what was recovered; returns the report."""
        messages = sum(len(q.messages) for q in qm.objects.queues.values() if q.is_local)
        doc = self._report("recovered", records=journal.stats().live_records, messages=messages,
                           in_doubt=len(qm.in_doubt))
        log.info("event=recovered qmgr=%s after=%s seconds=%.3f records=%d messages=%d in_doubt=%d "
                 "journal_bytes=%d", self.name, self.after, doc["seconds"], doc["records"], messages,
                 doc["in_doubt"], self.journal_bytes)
        return doc
