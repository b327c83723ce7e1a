"""The channel protocol's machine fed damaged conversations: only RemoteProtocolError, and
every number it passes on within its range.

A well-formed conversation (HELLO or PING or REQUEST first, HELLO_ACK, batches of
MESSAGEs, BATCH_END, CONFIRM, heartbeats, SECURITY, CLOSE) is encoded and damaged: bytes
changed, u32 fields set to edge values, cut, spliced, random bytes added. Each end's
machine takes the bytes it would receive, in random chunks. Whatever the damage it yields
only the protocol's events, whose numbers fit the ranges the agents store them in (a
channel's status, its synchronization record, PCF's MQLONG), or raises RemoteProtocolError.
"""

from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import RemoteProtocolError

EDGE_U32 = (0, 1, 99, 100, 9999, 10_000, 999_999, 1_000_000, 104_857_601, 999_999_999, 1_000_000_000, 0x7FFFFFFF,
            0x80000000, 0xFFFFFFFF)
TOPS = {"batch_size": P.MAX_BATCHSZ, "max_msg_length": P.MAX_MAXMSGL, "heartbeat": P.MAX_HBINT,
        "seq_wrap": P.MAX_SEQ, "in_doubt_seq": P.MAX_SEQ, "reset_to": P.MAX_SEQ, "last_seq": P.MAX_SEQ,
        "seq": P.MAX_SEQ}

HELLO = P.Hello("QM1.TO.QM2", "QM1", 50, 4_194_304, 300, 999_999_999, 7, 0, P.NPMS_FAST, True, 1, True)
ACK = P.HelloAck(0, "QM2", 20, 1_048_576, 600, 6, "ok", P.NPMS_FAST, 1208, 546, 1, True)
FROM_SENDER = [HELLO, P.Message(b"data" * 20), P.Message(b"x", b"props"), P.Message(b"np", b"", True),
               P.BatchEnd(7, 3), P.Heartbeat(), P.Security(P.SEC_REQUEST, b"token"), P.Close(2009, "bye")]
FROM_RECEIVER = [ACK, P.Confirm(7), P.Confirm(8, 2053), P.Heartbeat(ack=True), P.Security(P.SEC_DONE),
                 P.Close(0, "")]


def sender_after(opening: P.Event) -> P.ChannelConnection:
    conn = P.ChannelConnection(sender=True)
    conn.send(opening)
    return conn


def requester() -> P.ChannelConnection:
    conn = P.ChannelConnection(sender=False)
    conn.send(P.Request("PULL", "QM1"))
    return conn


# Each end in the state it is in when its partner's frames come, and those frames.
ENDS = {"receiver": (lambda: P.ChannelConnection(sender=False), [HELLO], FROM_SENDER),
        "receiver of a ping": (lambda: P.ChannelConnection(sender=False), [P.Ping("C", "QM1", bytes(16))], []),
        "partner of a requester": (lambda: P.ChannelConnection(sender=False), [P.Request("PULL", "QM1")], []),
        "requester": (requester, [HELLO], FROM_SENDER),
        "sender": (lambda: sender_after(HELLO), [ACK], FROM_RECEIVER),
        "pinging sender": (lambda: sender_after(P.Ping("C", "QM1", bytes(16))), [P.PingAck(0, "QM2", bytes(16))],
                           [P.Close(0)])}


def damage(frames: list[bytes], rng: random.Random) -> tuple[bytes, list[str]]:
    done = []
    frames = list(frames)
    for _ in range(rng.choice((1, 1, 2, 3))):
        i = rng.randrange(len(frames))
        f = bytearray(frames[i])
        how = rng.randrange(6) if f else 5  # (a frame cut to nothing: only sent again)
        if how == 0 and len(f) >= 16:  # a u32 of the payload to an edge value
            pos = rng.randrange(12, len(f) - 3)
            f[pos:pos + 4] = rng.choice(EDGE_U32).to_bytes(4, "big")
        elif how == 1:
            pos = rng.randrange(len(f))
            f[pos] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif how == 2 and len(f) >= 13:  # the header's type or length
            if rng.random() < 0.5:
                f[4] = rng.randrange(16)
            else:
                f[8:12] = rng.choice((*EDGE_U32, len(f) - 13, len(f) - 11)).to_bytes(4, "big")
        elif how == 3:
            del f[rng.randrange(len(f) + 1):]
        elif how == 4 and len(f) >= 12:
            f += bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 8, 40))))
            f[8:12] = (len(f) - 12).to_bytes(4, "big")
        else:
            frames.insert(rng.randrange(len(frames) + 1), frames[rng.randrange(len(frames))])
        if how != 5:
            frames[i] = bytes(f)
        done.append(f"frame {i}: mutation {how}")
    return b"".join(frames), done


def check(ev: P.Event) -> None:
    for f in dataclasses.fields(ev):  # type: ignore[arg-type]
        value = getattr(ev, f.name)
        if isinstance(value, int) and not isinstance(value, bool):
            assert 0 <= value <= TOPS.get(f.name, P.MAX_LONG), (ev, f.name)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), end=st.sampled_from(sorted(ENDS)), body=st.lists(st.integers(0, 9), max_size=8))
def test_either_end_fed_damaged_frames_raises_only_remote_protocol_errors(seed: int, end: str, body: list[int]) -> None:
    rng = random.Random(seed)
    make, first, rest = ENDS[end]
    conn = make()
    events = first + [rest[i % len(rest)] for i in body if rest]
    stream, done = damage([P.encode(ev) for ev in events], rng)
    pos = 0
    try:
        while pos < len(stream):
            step = rng.choice((1, 7, 12, 64, len(stream)))
            conn.receive_data(stream[pos:pos + step])
            pos += step
            for ev in conn.events():
                check(ev)
                if isinstance(ev, (P.Hello, P.HelloAck)):
                    conn.agreed(min(ev.max_msg_length or P.MAX_MAXMSGL, 1 << 20))
    except RemoteProtocolError:
        return
    except Exception as exc:
        raise AssertionError(f"seed {seed}, {end} ({'; '.join(done)}): {exc!r}") from exc
