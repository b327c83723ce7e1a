"""cli.logsetup: one line per event in either form, and rotation by size."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from ferrymq.cli import logsetup


def _record(text: str, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError("bad\nthing")
        except ValueError:
            info = sys.exc_info()
    return logging.LogRecord("ferrymq.test", logging.WARNING, __file__, 1, text, None, info)


def test_pairs_are_read_with_their_types_and_quotes() -> None:
    got = logsetup.fields("event=connect_refused peer=127.0.0.1:5 user='no body' reason=2035 seconds=0.25 "
                          "detail=\"a 'b' c\" empty= n=-3")
    assert got == {"event": "connect_refused", "peer": "127.0.0.1:5", "user": "no body", "reason": 2035,
                   "seconds": 0.25, "detail": "a 'b' c", "empty": "", "n": -3}


def test_a_traceback_stays_on_its_events_line() -> None:
    for fmt in (logsetup.KeyValueFormatter(), logsetup.JsonFormatter()):
        line = fmt.format(_record("event=tick_failed qmgr=QM1", exc=True))
        assert "\n" not in line and "ValueError" in line
    doc = json.loads(logsetup.JsonFormatter().format(_record("event=tick_failed qmgr=QM1", exc=True)))
    assert doc["event"] == "tick_failed" and doc["qmgr"] == "QM1" and doc["level"] == "WARNING"
    assert doc["exception"].startswith("Traceback") and doc["message"] == "event=tick_failed qmgr=QM1"


def test_text_without_pairs_becomes_a_quoted_message() -> None:
    line = logsetup.KeyValueFormatter().format(_record("plain words\nover two lines"))
    assert line.endswith('logger=ferrymq.test message="plain words over two lines"')
    assert line.startswith("ts=") and " level=WARNING " in line


def test_a_written_line_is_an_event_in_either_form() -> None:
    assert json.loads(logsetup.line("json", "ferrymq.start", "start_requested", qmgr="QM1"))["qmgr"] == "QM1"
    assert " event=start_requested qmgr=QM1" in logsetup.line("text", "ferrymq.start", "start_requested", qmgr="QM1")


@pytest.mark.parametrize("backups", [0, 2])
def test_rotation_keeps_the_count_and_bounds_the_size(tmp_path: Path, backups: int) -> None:
    path = tmp_path / "ferrymq.log"
    handler = logsetup.RotatingLog(path, 4096, backups, follow_stdio=False)
    handler.setFormatter(logsetup.KeyValueFormatter())
    try:
        for i in range(400):
            handler.emit(_record(f"event=tick n={i}"))
    finally:
        handler.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ferrymq.log", *(f"ferrymq.log.{n}" for n in range(1, backups + 1))]
    for p in tmp_path.iterdir():
        assert 0 < p.stat().st_size <= 4096
    assert path.read_text().splitlines()[-1].endswith("event=tick n=399")


def test_the_limits_are_checked() -> None:
    for bad in ((100, 1, "text"), (4096, -1, "text"), (4096, 1, "xml")):
        with pytest.raises(ValueError):
            logsetup.check(*bad)
    logsetup.check(4096, 0, "json")
