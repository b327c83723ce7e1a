"""The journal owner's CPU per sync with many files (run on demand; never a timed test):

    .venv/bin/python bench/journal_sync_bench.py [--batches 200] [--syncs 3000]

A FileJournal (256 KiB segments, in a temporary directory) is filled with ``--batches``
synced batches of 240 live 1 KiB records (two to a file); then each of ``--syncs`` syncs appends one small record and runs the
owner's side of a sync (``take_pending``, ``mark_durable``: what the server's loop runs per
group commit, the compaction check among it), without the disk write. Prints CPU µs per
sync: it should not grow with the files (a look at every file is left for when a file is
added, every 64 syncs here as each batch is padded to 4 KiB: once per 64 MiB file in a
server).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

from ferrymq.store.file import FileJournal


def run(batches: int, syncs: int) -> tuple[int, float]:
    d = tempfile.mkdtemp(prefix="ferrymq-sync-bench-")
    try:
        j = FileJournal(d + "/j", segment_size=256 * 1024, direct=False)
        j.load()
        rid = 1
        for _ in range(batches):
            for _ in range(240):
                j.add(rid, 1, b"x" * 1024)
                rid += 1
            j.sync()
        segments = j.stats().segments
        t0 = time.process_time()
        for _ in range(syncs):
            j.add(rid, 1, b"y" * 100)
            rid += 1
            pending = j.take_pending()
            assert pending is not None
            j.mark_durable(pending.lsn)
        took = (time.process_time() - t0) / syncs * 1e6
        j.abandon()
        return segments, took
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--syncs", type=int, default=3000)
    a = ap.parse_args()
    segments, took = run(a.batches, a.syncs)
    print(f"{segments} files: {took:,.1f} CPU µs per sync (owner side)")


if __name__ == "__main__":
    main()
