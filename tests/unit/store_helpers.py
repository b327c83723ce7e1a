"""Helpers for the file journal's tests: what a segment file holds, record by record."""

from __future__ import annotations

from pathlib import Path

from ferrymq.store import records as rec


def entries_of(path: Path) -> list[rec.Entry]:
    """The scanned records of a whole segment file (store/records.py's Entry tuples)."""
    data = path.read_bytes()
    view = memoryview(data)
    salt = rec.decode_segment_header(view, str(path))[0]
    entries, _ = rec.scan(data, view, rec.SEGMENT_RECORD_SIZE, len(data), salt)
    return entries
