"""Reference messages (MQRMH): ferrymq's pair of message exits that move bulk data.

An application puts a message that is only an MQRMH naming an object (SrcName) and where
it goes (DestName); the queues never hold the object, only the reference.

``send_reference`` (MSGEXIT of a sending channel) finds the MQRMH behind the MQXQH (and
an MQMDE or MQDH, if any), reads the object SrcName under the queue manager's
bulk_data_dir from the MQRMH's logical offset, and appends as much of it as the channel's
MAXMSGL leaves room for; DataLogicalLength, DataLogicalOffset and DataLogicalOffset2 say
which piece it carries, and MQRMHF_LAST marks the piece that ends the object. What does
not fit goes back on the transmission queue as a reference for the rest, in the batch's
unit of work, so a large object crosses as several reference messages in order and no
more than one piece is ever in memory. DataLogicalLength 0 means the rest of the object.

``receive_reference`` (MSGEXIT of a receiving channel) writes the bulk data to DestName
(SrcName when DestName is blank) under its bulk_data_dir, at the piece's logical offset
(a piece at offset 0 starts the file again; a piece beyond the end written so far is
refused: the pieces arrive in order), makes it durable before the batch commits, and
passes on the MQRMH without the bulk data. Writing at an offset is idempotent, so a batch
that backs out and is sent again writes the same bytes again.

Refused (the message is dead-lettered, MQDLH Reason as IBM names it): a name that is
empty, absolute or escapes bulk_data_dir, a missing object or no bulk_data_dir
(MQRC_SRC_NAME_ERROR 2262, MQRC_DEST_NAME_ERROR 2264); a segmented reference message, an
offset past the object's end or a piece out of order (MQRC_RMH_ERROR 2220).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from pathlib import Path

from ferrymq.channels.exits import ChannelExitParms
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.mq import cxc as X
from ferrymq.wire.headers import walk_headers
from ferrymq.wire.mqmd import detect_big_endian
from ferrymq.wire.mqmde import MQMDE
from ferrymq.wire.mqrmh import LOGICAL_OFFSET_BASE, MQRMH

log = logging.getLogger("ferrymq.channels")

_REF = C.MQFMT_REF_MSG_HEADER.rstrip()
_MDE = C.MQFMT_MD_EXTENSION.rstrip()
_SEGMENTED = C.MQMF_SEGMENT | C.MQMF_LAST_SEGMENT


@dataclasses.dataclass(frozen=True, slots=True)
class Found:
    """Where a message's MQRMH is, what it says, and its byte order."""

    offset: int
    rmh: MQRMH
    big_endian: bool
    segmented: bool


def find_reference(data: bytes) -> Found | None:
    """The MQRMH of a transmission-queue message (MQXQH first), None when it has none.

    Raises:
        DecodeError: a malformed header chain or MQRMH.
    """
    big = detect_big_endian(data, 0, "MQXQH", (C.MQXQH_VERSION_1,))
    encoding = C.MQENC_INTEGER_NORMAL | C.MQENC_DECIMAL_NORMAL | C.MQENC_FLOAT_IEEE_NORMAL if big \
        else C.MQENC_NATIVE
    chain = walk_headers(data, C.MQFMT_XMIT_Q_HEADER, encoding, C.MQCCSI_Q_MGR)
    segmented = False
    for ref in chain.headers:
        if ref.format == _MDE:
            segmented = bool(MQMDE.unpack_from(data, ref.offset).msg_flags & _SEGMENTED)
        if ref.format == _REF:
            rmh = MQRMH.unpack_from(data, ref.offset)
            rmh_big = detect_big_endian(data, ref.offset, "MQRMH", (C.MQRMH_VERSION_1,))
            return Found(ref.offset, rmh, rmh_big, segmented)
    return None


def inside(base: Path | None, name: str) -> Path | None:
    """``name`` under ``base`` (symbolic links resolved); None for an empty or absolute
    name, one that leaves ``base``, or no ``base``."""
    name = name.strip()
    if base is None or not name or "\0" in name or os.path.isabs(name):
        return None
    root = base.resolve()
    path = (root / name).resolve()
    if path == root or not path.is_relative_to(root):
        return None
    return path


def _refuse(p: ChannelExitParms, reason: int, detail: str) -> int:
    log.warning("event=reference_refused channel=%s reason=%d detail=%s", p.channel_name, reason, detail)
    p.feedback = reason
    return X.MQXCC_SUPPRESS_FUNCTION


def _located(p: ChannelExitParms) -> Found | int:
    """The reference in ``p.data`` at MQXR_MSG, else the ExitResponse to give at once:
    MQXCC_OK for another call or a message without one, the refusal of a bad one."""
    if p.exit_reason != X.MQXR_MSG:
        return X.MQXCC_OK
    try:
        found = find_reference(p.data)
    except DecodeError as exc:
        return _refuse(p, C.MQRC_RMH_ERROR, f"malformed headers: {exc}")
    if found is not None and found.segmented:
        return _refuse(p, C.MQRC_RMH_ERROR, "a reference message may not be segmented")
    return X.MQXCC_OK if found is None else found


def _with_piece(rmh: MQRMH, offset: int, length: int, flags: int) -> MQRMH:
    return dataclasses.replace(rmh, data_logical_length=length, data_logical_offset=offset % LOGICAL_OFFSET_BASE,
                               data_logical_offset2=offset // LOGICAL_OFFSET_BASE, flags=flags)


def send_reference(p: ChannelExitParms) -> int:
    """MSGEXIT of a sending channel (see the module docstring)."""
    found = _located(p)
    if not isinstance(found, Found):
        return found
    data, at, rmh = p.data, found.offset, found.rmh
    if len(data) > at + rmh.struc_length:
        return X.MQXCC_OK  # the bulk data is there already: nothing to add
    if not p.sending or p.requeue is None:
        return _refuse(p, C.MQRC_RMH_ERROR, "send_reference is the exit of a sending channel")
    path = inside(p.settings.bulk_data_dir, rmh.src_name)
    if path is None:
        return _refuse(p, C.MQRC_SRC_NAME_ERROR, f"SrcName {rmh.src_name!r} is not a name under bulk_data_dir "
                                                 f"{p.settings.bulk_data_dir}")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return _refuse(p, C.MQRC_SRC_NAME_ERROR, f"SrcName {rmh.src_name!r}: {exc.strerror}")
    try:
        size = os.fstat(fd).st_size
        start = rmh.logical_offset
        if start > size:
            return _refuse(p, C.MQRC_RMH_ERROR, f"logical offset {start} is past the end of {rmh.src_name!r} "
                                                f"({size} bytes)")
        end = min(start + rmh.data_logical_length, size) if rmh.data_logical_length else size
        head = data[:at]
        header_length = len(_with_piece(rmh, start, 0, 0).pack(big_endian=found.big_endian))
        room = p.max_msg_length - len(head) - header_length
        if room <= 0 and end > start:
            return _refuse(p, C.MQRC_RMH_ERROR, f"MAXMSGL {p.max_msg_length} leaves no room for bulk data")
        piece = min(end - start, room)
        bulk = os.pread(fd, piece, start)
        if len(bulk) != piece:
            return _refuse(p, C.MQRC_SRC_NAME_ERROR, f"{rmh.src_name!r} shrank while it was read")
    finally:
        os.close(fd)
    if start + piece < end:  # the rest follows as its own reference, behind this one
        rest = 0 if not rmh.data_logical_length else end - start - piece
        p.requeue(head + _with_piece(rmh, start + piece, rest, rmh.flags).pack(big_endian=found.big_endian))
    flags = C.MQRMHF_LAST if start + piece == size else C.MQRMHF_NOT_LAST
    p.data = head + _with_piece(rmh, start, piece, flags).pack(big_endian=found.big_endian) + bulk
    return X.MQXCC_OK


def receive_reference(p: ChannelExitParms) -> int:
    """MSGEXIT of a receiving channel (see the module docstring)."""
    found = _located(p)
    if not isinstance(found, Found):
        return found
    data, rmh = p.data, found.rmh
    bulk_at = found.offset + rmh.struc_length
    length = len(data) - bulk_at
    if length == 0:
        return X.MQXCC_OK  # a reference without bulk data passes as it is
    if rmh.data_logical_length not in (0, length):
        return _refuse(p, C.MQRC_RMH_ERROR, f"DataLogicalLength {rmh.data_logical_length} but {length} bytes follow")
    name = rmh.dest_name.strip() or rmh.src_name
    path = inside(p.settings.bulk_data_dir, name)
    if path is None:
        return _refuse(p, C.MQRC_DEST_NAME_ERROR, f"DestName {name!r} is not a name under bulk_data_dir "
                                                  f"{p.settings.bulk_data_dir}")
    start = rmh.logical_offset
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError as exc:
        return _refuse(p, C.MQRC_DEST_NAME_ERROR, f"DestName {name!r}: {exc.strerror}")
    try:
        if start == 0:
            os.ftruncate(fd, 0)
        written = os.fstat(fd).st_size
        if start > written:
            return _refuse(p, C.MQRC_RMH_ERROR, f"a piece of {name!r} at {start} arrived before the bytes from "
                                                f"{written}: pieces arrive in order")
        view = memoryview(data)[bulk_at:]
        done = 0
        while done < length:
            done += os.pwrite(fd, view[done:], start + done)
        del view
        if rmh.flags & C.MQRMHF_LAST:
            os.ftruncate(fd, start + length)
        os.fsync(fd)  # durable before the batch that carried it commits
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    p.data = data[:found.offset] + _with_piece(rmh, start, length, rmh.flags).pack(big_endian=found.big_endian)
    return X.MQXCC_OK
