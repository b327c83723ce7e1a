"""The server's log: ``ferrymq.log`` in the data directory, rotated by size, one line per event.

Every line is one event, in either form (``--log-format`` at create or alter):

- ``text`` (the default): ``key=value`` pairs, ``ts``, ``level`` and ``logger`` first, then
  the event's own (``event=qmgr_started qmgr=QM1 pid=4242 ...``);
- ``json``: one JSON object a line with the same keys (numbers as numbers) and
  ``message``, the event's own text, so that a log shipper needs no parser of ours.

A traceback stays on its event's line (``exception=`` a JSON string), so that a line is
always an event. The file is rotated when the next line would take it past
``--log-max-bytes``: ``ferrymq.log`` becomes ``ferrymq.log.1``, the older ones move up,
and beyond ``--log-backups`` they are deleted. The detached server's standard output and
error (where a stray print or a crash of the interpreter goes) follow the rotation.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_BACKUPS = 5
MIN_MAX_BYTES = 4096
MAX_BACKUPS = 1000
FORMATS = ("text", "json")

# key=value in an event's text: a value is quoted ('...' or "...", as %r writes it) or runs to a space.
_PAIR = re.compile(r"""(?:^|\s)([A-Za-z_][A-Za-z0-9_.]*)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S*)""")
_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")


def check(max_bytes: int, backups: int, fmt: str) -> None:
    """Raises ValueError naming the rule: a size below MIN_MAX_BYTES, a count outside
    0..MAX_BACKUPS, or a format other than text and json."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"log_max_bytes {max_bytes} is below the minimum of {MIN_MAX_BYTES}")
    if not 0 <= backups <= MAX_BACKUPS:
        raise ValueError(f"log_backups {backups} is out of range (0 to {MAX_BACKUPS})")
    if fmt not in FORMATS:
        raise ValueError(f"log_format {fmt!r} is not one of {', '.join(FORMATS)}")


def _stamp(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fields(text: str) -> dict[str, Any]:
    """The key=value pairs of an event's text (values: int, float or str, quotes removed)."""
    out: dict[str, Any] = {}
    for key, raw in _PAIR.findall(text):
        value: Any = raw
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            value = raw[1:-1]
        elif _INT.fullmatch(raw):
            value = int(raw)
        elif _FLOAT.fullmatch(raw):
            value = float(raw)
        out.setdefault(key, value)
    return out


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=... logger=... event=...``: the event's text, after a fixed head."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage().replace("\n", " ")
        head = f"ts={_stamp(record)} level={record.levelname} logger={record.name}"
        line = f"{head} {text}" if text.startswith("event=") else f"{head} message={json.dumps(text)}"
        if record.exc_info:
            line += f" exception={json.dumps(self.formatException(record.exc_info))}"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ts, level, logger, the event's pairs, message (and exception)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        doc: dict[str, Any] = {"ts": _stamp(record), "level": record.levelname, "logger": record.name}
        for key, value in fields(text).items():
            doc.setdefault(key, value)
        doc["message"] = text
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


class RotatingLog(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose new file also takes the process's stdout and stderr
    (``follow_stdio``): the detached server's were the log file it was started with."""

    def __init__(self, path: Path, max_bytes: int, backups: int, follow_stdio: bool) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.follow_stdio = follow_stdio

    def doRollover(self) -> None:
        if self.backupCount == 0:  # nothing kept: the file starts again (the base class would let it grow)
            if self.stream is not None:
                self.stream.close()
            os.truncate(self.baseFilename, 0)
            self.stream = self._open()
        else:
            super().doRollover()
        if self.follow_stdio and self.stream is not None:
            fd = self.stream.fileno()
            for std in (sys.stdout, sys.stderr):
                std.flush()
            os.dup2(fd, 1)
            os.dup2(fd, 2)


def line(fmt: str, logger: str, event: str, **pairs: Any) -> str:
    """One INFO event line in format ``fmt``, for a process writing the log without logging."""
    text = " ".join([f"event={event}", *(f"{k}={v}" for k, v in pairs.items())])
    record = logging.LogRecord(logger, logging.INFO, __file__, 0, text, None, None)
    return (JsonFormatter() if fmt == "json" else KeyValueFormatter()).format(record)


def configure(log_file: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS,
              fmt: str = "text", to_file: bool = True) -> logging.Handler:
    """Send the process's logging (INFO and up) to ``log_file``, rotated (``to_file``; the
    detached server), or to stderr (in the foreground), in format ``fmt``. Replaces the
    root logger's handlers; returns the new one."""
    handler: logging.Handler
    if to_file:
        handler = RotatingLog(log_file, max_bytes, backups, follow_stdio=True)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler
