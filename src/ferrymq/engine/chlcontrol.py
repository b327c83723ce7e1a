"""Channel control: what the channel initiator (ferrymq.channels, L3) and the channel
commands share in the engine.

The engine never calls its drivers, so the commands that act on running channels (START,
STOP, RESET CHANNEL, START/STOP LISTENER) are requests queued here, taken by the initiator
(``take_requests``) and carried out by it; their PCF reply says the request was accepted,
as IBM's START CHANNEL does (AMQ8018I). What the agents report (status, sequence numbers,
counts) is written into ``ChannelStatus`` rows that DISPLAY CHSTATUS reads; listeners
report into ``ListenerStatus``.

A sending channel's in-doubt batch is a prepared unit of work (engine.xa) under an XID
that names the channel and the batch's sequence number (``batch_xid``); RESOLVE CHANNEL
resolves it here, by XID, like any prepared unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.tls.names import TLSPeer

XID_PREFIX = b"ferrymq-channel:"


def batch_xid(channel: str, seq: int) -> bytes:
    """The XID of a sending channel's batch ``seq`` while it is in doubt."""
    return XID_PREFIX + channel.encode("ascii") + b":" + str(seq).encode("ascii")


def parse_xid(xid: bytes) -> tuple[str, int] | None:
    """The channel and sequence number of a batch XID; None for any other XID."""
    if not xid.startswith(XID_PREFIX):
        return None
    name, _, seq = xid[len(XID_PREFIX):].rpartition(b":")
    if not name or not seq.isdigit():
        return None
    return name.decode("ascii", "replace"), int(seq)


def batches_in_doubt(xids: Iterable[bytes], channel: str, seq_wrap: int) -> list[tuple[bytes, int]]:
    """A sending channel's prepared, unresolved batches among ``xids`` as (XID, sequence
    number), oldest first. With pipelining there may be two (PIPELINELENGTH): their
    numbers follow each other, 1 after ``seq_wrap``, so the oldest is the one whose
    predecessor is not among them; anything else (SEQWRAP altered meanwhile) is taken in
    numeric order."""
    mine = {}
    for xid in xids:
        parsed = parse_xid(xid)
        if parsed is not None and parsed[0] == channel:
            mine[parsed[1]] = xid
    firsts = [s for s in mine if (seq_wrap if s == 1 else s - 1) not in mine]
    order = sorted(mine)
    if len(firsts) == 1:
        order = [firsts[0]]
        while len(order) < len(mine):
            order.append(1 if order[-1] >= seq_wrap else order[-1] + 1)
    return [(mine[s], s) for s in order]


def committed_at_receiver(seqs: list[int], last_seq: int) -> list[bool]:
    """For a sender's batches in doubt (sequence numbers, oldest first), whether each was
    committed by the receiver whose last committed batch is ``last_seq``: it commits
    them in order, so those up to ``last_seq`` were, any later were not."""
    upto = seqs.index(last_seq) if last_seq in seqs else -1
    return [i <= upto for i in range(len(seqs))]


@dataclass(slots=True)
class Timings:
    """Durations in µs: how many, their least, greatest and sum."""

    n: int = 0
    least: int = 0
    most: int = 0
    total: int = 0

    def add(self, micros: int) -> None:
        if not self.n or micros < self.least:
            self.least = micros
        self.most = max(self.most, micros)
        self.total += micros
        self.n += 1


@dataclass(slots=True)
class ChannelCounts:
    """What one channel instance did in a statistics interval (STATCHL): its message
    channel agent counts here, engine.monitoring writes and resets it each STATINT."""

    msgs: int = 0
    bytes_base: int = 0  # the link's bytes sent and received when the interval began
    bytes_now: int = 0
    full: int = 0  # batches of BATCHSZ messages
    incomplete: int = 0  # batches ended before BATCHSZ
    batch_msgs: int = 0  # messages in those batches (AverageBatchSize)
    net: Timings = field(default_factory=Timings)  # round trips: BatchEnd sent to its CONFIRM
    exits: Timings = field(default_factory=Timings)  # the message exit, per message
    put_retries: int = 0  # a receiver's puts tried again (MRRTY)

    def batch(self, count: int, full: bool, link_bytes: int) -> None:
        """A batch of ``count`` messages committed at both ends."""
        self.msgs += count
        self.batch_msgs += count
        if full:
            self.full += 1
        else:
            self.incomplete += 1
        self.bytes_now = link_bytes

    def fast(self, count: int, link_bytes: int) -> None:
        """``count`` NPMSPEED(FAST) messages, outside any batch."""
        self.msgs += count
        self.bytes_now = link_bytes

    def next(self) -> ChannelCounts:
        """The next interval's: bytes counted from where this one ended."""
        return ChannelCounts(bytes_base=self.bytes_now, bytes_now=self.bytes_now)


@dataclass(slots=True)
class ChannelStatus:
    """One channel instance as DISPLAY CHSTATUS shows it (keywords of chlattrs.CHSTATUS_ATTRS)."""

    name: str
    chltype: int
    status: int = F.MQCHS_STARTING
    substate: int = F.MQCHSSTATE_OTHER
    conname: str = ""
    xmitq: str = ""
    rqmname: str = ""
    msgs: int = 0
    batches: int = 0
    bytes_sent: int = 0
    bytes_rcvd: int = 0
    indoubt: bool = False
    cur_msgs: int = 0
    cur_seq: int = 0
    last_seq: int = 0
    last_msg: tuple[str, str] = ("", "")
    started: tuple[str, str] = ("", "")
    batchsz: int = 0
    hbint: int = 0
    maxmsgl: int = 0
    npmspeed: int = F.MQNPMS_NORMAL
    short_left: int = 0
    long_left: int = 0
    stop_requested: bool = False
    tls: TLSPeer | None = None  # what its TLS handshake agreed (SSLPEER, SSLCERTI, SSLCIPH, SECPROT); None: plain
    error: str = ""  # why the channel last stopped (an exit that failed ...), for logs and `ferrymq status`
    # A client connection's conversations (CURSHCNV, MAXSHCNV): one per TCP connection in
    # ferrymq's protocol, none counted under SHARECNV(0) (docs/distributed.md, "SHARECNV").
    cur_shcnv: int = 0
    max_shcnv: int = 0
    stats: ChannelCounts | None = None  # its channel statistics while STATCHL collects (engine.monitoring)


@dataclass(slots=True)
class ListenerStatus:
    name: str
    status: int = C.MQSVC_STATUS_STARTING
    port: int = 0
    ipaddr: str = ""
    backlog: int = 0
    started: tuple[str, str] = ("", "")


@dataclass(slots=True)
class Ping:
    """A PING CHANNEL in flight: the initiator pings, then calls ``answer(reason, detail)``
    (0: complete), which the command server set to send the PCF reply then."""

    name: str
    length: int
    answer: Callable[[int, str], None] | None = None


@dataclass(frozen=True, slots=True)
class Request:
    """A command for the channel initiator: ``verb`` START, STOP, RESET, PING, START_LISTENER,
    STOP_LISTENER; ``mode`` (STOP: MQMODE_*), ``status`` (STOP: MQCHS_STOPPED or
    MQCHS_INACTIVE), ``seq`` (RESET: the next sequence number), ``ping`` (PING).
    STOP's filters (blank: any): ``conname`` the partner's address, ``qmname`` its queue
    manager, ``clientid`` a client's ApplName (``matches``)."""

    verb: str
    name: str
    mode: int = F.MQMODE_QUIESCE
    status: int = F.MQCHS_STOPPED
    seq: int = 1
    ping: Ping | None = None
    conname: str = ""
    qmname: str = ""
    clientid: str = ""

    def matches(self, conname: str, qmname: str = "", clientid: str = "") -> bool:
        """Whether an instance talking to ``conname`` (its queue manager ``qmname``, its
        client's ApplName ``clientid``) is one this STOP names: each filter given must be
        equal, blanks and case aside for names; CONNAME matches the address with or without
        its port."""
        if self.conname and not _same_address(self.conname, conname):
            return False
        if self.qmname and self.qmname.strip().upper() != qmname.strip().upper():
            return False
        return not self.clientid or self.clientid.strip() == clientid.strip()


def _same_address(wanted: str, actual: str) -> bool:
    """CONNAME('127.0.0.1') names every port of that host; '127.0.0.1(5000)' one; an
    instance's address is "host(port)" (message channels) or "host" (clients)."""
    wanted, actual = wanted.strip(), actual.strip()
    if "(" in wanted:
        return wanted == actual
    return actual.partition("(")[0] == wanted


@dataclass(slots=True)
class ChannelControl:
    """The status table and the initiator's requests (see the module docstring).
    ``stopped`` holds channels left STOPPED by STOP CHANNEL (IBM: they stay stopped until
    START CHANNEL, even when their transmission queue fills)."""

    channels: dict[str, ChannelStatus] = field(default_factory=dict)
    listeners: dict[str, ListenerStatus] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    stopped: set[str] = field(default_factory=set)
    initiator: bool = False  # whether a channel initiator takes the requests
    # PING CHANNELs whose reply waits for the ping: the command server takes them right after
    # the command and answers each when it ends (an immediate reply would say nothing).
    deferred: list[Ping] = field(default_factory=list)
    # Set by the initiator: wakes it to take a request now rather than at its next poll
    # (START CHANNEL acts at once, as IBM's does).
    wake: Callable[[], None] | None = None

    def request(self, req: Request) -> None:
        self.requests.append(req)
        self.changed()

    def changed(self) -> None:
        """A request, or definitions that may change which channels start: the initiator
        looks again now (it sleeps while nothing is to be looked at)."""
        if self.wake is not None:
            self.wake()

    def take_requests(self) -> list[Request]:
        taken, self.requests = self.requests, []
        return taken

    def take_deferred(self) -> list[Ping]:
        taken, self.deferred = self.deferred, []
        return taken

    def active(self, name: str) -> bool:
        row = self.channels.get(name)
        return row is not None and row.status not in (F.MQCHS_INACTIVE, F.MQCHS_STOPPED)

    def listening(self, name: str) -> bool:
        row = self.listeners.get(name)
        return row is not None and row.status != C.MQSVC_STATUS_STOPPED
