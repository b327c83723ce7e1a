"""The channel initiator: listeners, agents, and the channel commands' requests.

Started with the queue manager (``start``): listeners of CONTROL(QMGR) or STARTONLY
listen; it carries out the requests the commands queued (engine.chlcontrol: START/STOP/RESET
CHANNEL, START/STOP LISTENER) as soon as one is queued, and every POLL seconds starts the
sending channel of every transmission queue that holds messages (unless the channel was
left STOPPED), a convenience of ferrymq's; a transmission queue with TRIGGER and
INITQ(SYSTEM.CHANNEL.INITQ) is not polled: its trigger messages, read there as IBM's
initiator reads them (channels.initq), start its channel. ``stop`` ends agents and listeners;
their units of work are backed out, a prepared batch stays in doubt for the next start.

It polls only while there is something to poll for: a sending channel, neither running
nor STOPPED, whose transmission queue is served by polling (or an initiation queue it
cannot wait on). Otherwise it sleeps until woken: by a request, a trigger message handed to
its wait on SYSTEM.CHANNEL.INITQ, a sender ending, or a change of definitions
(ChannelControl.wake). The timers of a running channel (SHORTTMR, LONGTMR, DISCINT, HBINT)
are its agent's own. An idle queue manager's initiator so costs nothing.

START CHANNEL of a requester (RQSTR) connects to its CONNAME and sends REQUEST
(channels.requester); this end is then the receiver of that conversation. A REQUEST
taken by a listener starts the named server (SVR, with or without CONNAME) over that
connection, or, for a sender (SDR), closes it and calls back; else it is refused with
IBM's reason in a CLOSE, and the requester's channel is left STOPPED with it. The
REQUEST meets the channel authentication records a sender's HELLO meets at a receiver
(channels.receiver.check_records): blocked, it is refused with 2035 MQRC_NOT_AUTHORIZED.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from ferrymq.channels.exits import ExitSettings
from ferrymq.channels.host import EngineHost, Listening
from ferrymq.channels.initq import InitiationQueue, served_by_trigger
from ferrymq.channels.link import ChannelError, Inbound, Link
from ferrymq.channels.ping import ping
from ferrymq.channels.receiver import Committed, ReceiverAgent, check_records
from ferrymq.channels.requester import refusal, request
from ferrymq.channels.sender import SenderAgent
from ferrymq.engine import chlattrs as K
from ferrymq.engine.chlcontrol import ChannelStatus, ListenerStatus, Ping, Request
from ferrymq.engine.objects import stamp
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import RemoteProtocolError
from ferrymq.tls import names

log = logging.getLogger("ferrymq.channels")

POLL = 0.05


class ChannelInitiator:
    """One per running queue manager (see the module docstring)."""

    def __init__(self, host: EngineHost, *, may_listen: Callable[[str], bool],
                 default_host: str = "127.0.0.1", exit_settings: ExitSettings | None = None,
                 pipeline_length: int = 1, clients: Callable[[Request], None] | None = None) -> None:
        """``may_listen(address)``: whether a listener may bind there: an address beyond
        loopback only when the queue manager's owner allowed it, as for its client port
        (--allow-unauthenticated-remote; docs/security.md).
        ``exit_settings``: ExitPath and bulk_data_dir for the channels' exits.
        ``pipeline_length``: IBM's PipeLineLength (above 1: batches pipelined, as 2).
        ``clients``: carries out STOP CHANNEL of a server-connection channel (the server's
        ``stop_channel``: its instances are client connections, which the server holds)."""
        self.host, self.qm = host, host.qmgr
        self.may_listen = may_listen
        self.exit_settings = exit_settings or ExitSettings(host.qmgr.name)
        self.pipeline_length = pipeline_length
        self.clients = clients
        self.control = host.qmgr.state.channel_control
        self.default_host = default_host
        self.senders: dict[str, tuple[SenderAgent, asyncio.Task[None]]] = {}
        self.receivers: dict[str, ReceiverAgent] = {}
        self.requesting: set[str] = set()  # requesters whose REQUEST has not been answered yet
        self.inbound: set[asyncio.Task[None]] = set()
        self.pings: set[asyncio.Task[None]] = set()
        self.initq = InitiationQueue(host.qmgr, host.wait, self._wake)
        self.listeners: dict[str, asyncio.Server | Listening] = {}
        self.resets: dict[str, int] = {}
        self.committed: dict[str, Committed] = {}  # receivers' last committed batches (see ReceiverAgent)
        self._task: asyncio.Task[None] | None = None
        self._woken = asyncio.Event()  # a request was queued (``ChannelControl.wake``), ...
        self.stopping = False

    async def start(self) -> None:
        self.control.initiator = True
        self.initq.open()
        self.host.done()  # opening it may have made trigger messages
        for obj in list(self.qm.state.listeners):
            if obj.get("CONTROL") in (C.MQSVC_CONTROL_Q_MGR, C.MQSVC_CONTROL_Q_MGR_START):
                await self.start_listener(obj.name)
        loop = asyncio.get_running_loop()

        def wake() -> None:  # a command may run off the loop's thread
            loop.call_soon_threadsafe(self._woken.set)

        self.control.wake = wake
        self._task = loop.create_task(self._run(), name="ferrymq-channel-initiator")

    async def stop(self) -> None:
        self.stopping = True
        self.control.initiator = False
        self.control.wake = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.initq.close()
        self.host.done()
        for name in list(self.listeners):
            await self.stop_listener(name)
        for agent, _ in list(self.senders.values()):
            agent.stop(F.MQMODE_FORCE)
        for receiver in list(self.receivers.values()):
            receiver.abort()
        tasks = [t for _, t in self.senders.values()] + list(self.inbound) + list(self.pings)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- listeners ------------------------------------------------------------------------
    async def start_listener(self, name: str) -> None:
        obj = self.qm.state.listeners.find(name)
        if obj is None or name in self.listeners:
            return
        host = str(obj.get("IPADDR")) or self.default_host
        port = int(obj.get("PORT"))
        backlog = int(obj.get("BACKLOG")) or 100
        row = self.control.listeners[name] = ListenerStatus(name, C.MQSVC_STATUS_STARTING, port, host, backlog)
        if not self.may_listen(host):
            log.error("event=listener_refused listener=%s host=%s rule=remote_bind_unauthenticated detail=an address "
                      "beyond loopback must be allowed by the queue manager's owner: "
                      "--allow-unauthenticated-remote (docs/security.md)", name, host)
            row.status = C.MQSVC_STATUS_STOPPED
            return
        server: asyncio.Server | Listening
        try:
            if self.host.listen is not None:  # plain and TLS channels on the port
                server = self.host.listen(self._stream, backlog, f"LISTENER({name})")
                bound = await server.start(host, port)
            else:
                server = await asyncio.get_running_loop().create_server(lambda: self._stream(0.0), host, port,
                                                                        backlog=backlog, reuse_address=True)
                bound = server.sockets[0].getsockname()[1]
        except OSError as exc:
            log.error("event=listener_failed listener=%s host=%s port=%d error=%s", name, host, port, exc)
            row.status = C.MQSVC_STATUS_STOPPED
            return
        self.listeners[name] = server
        row.port = bound
        row.status, row.started = C.MQSVC_STATUS_RUNNING, stamp(time.time())
        log.info("event=listener_started listener=%s host=%s port=%d", name, host, row.port)

    async def stop_listener(self, name: str) -> None:
        server = self.listeners.pop(name, None)
        if server is not None:
            server.close()
            await server.wait_closed()
        row = self.control.listeners.get(name)
        if row is not None:
            row.status = C.MQSVC_STATUS_STOPPED

    def _stream(self, accepted: float) -> asyncio.BaseProtocol:
        """A connection the listener accepted: its conversation runs in ``_accepted``."""
        return Inbound(self._accepted)

    async def _accepted(self, link: Link) -> None:
        peer = link.writer.get_extra_info("peername")
        where = f"{peer[0]}({peer[1]})" if isinstance(peer, tuple) else str(peer)
        task = asyncio.current_task()
        if task is not None:
            self.inbound.add(task)
        try:
            try:
                first = await link.next_event(30)
            except (OSError, ChannelError, TimeoutError, RemoteProtocolError) as exc:
                log.info("event=channel_conversation_ended peer=%s error=%s", where, exc or type(exc).__name__)
                link.close()
                return
            if isinstance(first, P.Request):
                await self.requested(first, link, where)
            else:
                await self.receiver(link, where).run(first)
        finally:
            if task is not None:
                self.inbound.discard(task)

    def receiver(self, link: Link, where: str) -> ReceiverAgent:
        return ReceiverAgent(self.host, link, where, self.control.channels, self.receivers, self.control.stopped,
                             self.committed, self.exit_settings, pipelined=self.pipeline_length > 1)

    # -- requesters -----------------------------------------------------------------------
    async def requested(self, req: P.Request, link: Link, where: str) -> None:
        """A REQUEST taken by a listener (module docstring)."""
        chl = self.qm.state.channels.find(req.channel)
        tls = link.writer.get_extra_info("ssl_object")
        tls_peer = names.peer_of(tls) if tls else None
        reason, text = refusal(chl, req.channel, req.qmgr, stopped=req.channel in self.control.stopped,
                               running=req.channel in self.senders, tls_peer=tls_peer)
        if not reason and chl is not None:  # the same records a sender's HELLO meets at a receiver
            text = check_records(self.qm, chl.name, req.qmgr, where, tls_peer)[0]
            self.host.done()  # the Channel Blocked events it may have put
            reason = C.MQRC_NOT_AUTHORIZED if text else 0
        if reason or self.stopping or chl is None:
            log.warning("event=channel_request_refused channel=%s peer=%s qmgr=%s reason=%d %s", req.channel, where,
                        req.qmgr, reason, text)
            await self.close_link(link, P.Close(reason or F.MQRCCF_CHANNEL_CLOSED, text or "ending"))
            return
        if chl.chltype == K.SDR:  # IBM's callback: the sender connects to the requester's CONNAME
            log.info("event=channel_callback channel=%s peer=%s qmgr=%s", req.channel, where, req.qmgr)
            await self.close_link(link, P.Close(0, "callback"))
            self.start_sender(req.channel)
            return
        log.info("event=channel_requested channel=%s peer=%s qmgr=%s", req.channel, where, req.qmgr)
        self.start_sender(req.channel, inbound=(link, where))
        started = self.senders.get(req.channel)
        if started is not None:  # the conversation lives as long as the server's session
            await asyncio.gather(started[1], return_exceptions=True)

    @staticmethod
    async def close_link(link: Link, close: P.Close) -> None:
        try:
            link.write(close)
            await link.flush()
        except (OSError, ChannelError):
            pass
        link.close()

    def start_requester(self, name: str) -> None:
        chl = self.qm.state.channels.find(name)
        if (chl is None or chl.chltype != K.RQSTR or name in self.requesting or name in self.receivers
                or self.stopping):
            return
        self.requesting.add(name)
        row = self.control.channels[name] = ChannelStatus(name, F.MQCHT_REQUESTER, F.MQCHS_REQUESTING,
                                                          conname=chl.text("CONNAME"))
        task = asyncio.get_running_loop().create_task(self._requester(chl.name, row), name=f"ferrymq-rqstr-{name}")
        self.inbound.add(task)
        task.add_done_callback(self.inbound.discard)

    async def _requester(self, name: str, row: ChannelStatus) -> None:
        """Request, then receive: the partner's HELLO on this connection (a SVR), or its
        CLOSE with reason 0 (a SDR calling back: its HELLO comes to a listener here)."""
        chl = self.qm.state.channels.find(name)
        try:
            assert chl is not None
            link, where = await request(chl, self.qm.name, self.host.keys)
        except ChannelError as exc:
            self.requesting.discard(name)
            self.request_failed(row, exc.reason, str(exc))
            return
        try:
            first = await link.next_event(30)
        except (OSError, ChannelError, TimeoutError, RemoteProtocolError) as exc:
            link.close()
            self.requesting.discard(name)
            self.request_failed(row, getattr(exc, "reason", C.MQRC_CONNECTION_BROKEN),
                                f"{where} ended the request: {exc or type(exc).__name__}")
            return
        self.requesting.discard(name)
        if isinstance(first, P.Close):
            link.close()
            if first.reason:
                self.request_failed(row, first.reason, f"{where} refused the request: {first.text}")
            else:
                log.info("event=channel_request_called_back channel=%s peer=%s", name, where)
                row.status = F.MQCHS_INITIALIZING  # until the sender's HELLO arrives at a listener here
            return
        await self.receiver(link, where).run(first)

    def request_failed(self, row: ChannelStatus, reason: int, text: str) -> None:
        log.error("event=channel_request_failed channel=%s reason=%d %s", row.name, reason, text)
        row.status, row.error = F.MQCHS_STOPPED, f"{reason}: {text}"

    # -- senders --------------------------------------------------------------------------
    def start_sender(self, name: str, inbound: tuple[Link, str] | None = None) -> None:
        """``inbound``: a requester's connection (and address) for a server to send over."""
        chl = self.qm.state.channels.find(name)
        if chl is None or chl.chltype not in K.SENDING or name in self.senders or self.stopping:
            return
        if inbound is None and not chl.text("CONNAME").strip():
            return  # a server channel without CONNAME waits for a requester
        row = self.control.channels[name] = ChannelStatus(name, K.CHLTYPES[chl.chltype], F.MQCHS_STARTING,
                                                          xmitq=chl.text("XMITQ"),
                                                          stats=self.qm.monitor.channel_counts(name))
        agent = SenderAgent(self.host, chl, row, reset_to=self.resets.pop(name, 0), exit_settings=self.exit_settings,
                            pipelined=self.pipeline_length > 1, inbound=inbound)
        task = asyncio.get_running_loop().create_task(self._sender(agent), name=f"ferrymq-channel-{name}")
        self.senders[name] = (agent, task)

    async def _sender(self, agent: SenderAgent) -> None:
        name = agent.chl.name
        final = F.MQCHS_STOPPED
        try:
            final = await agent.run()
        except Exception:  # a defect: logged; the channel is started again by its queue
            log.exception("event=channel_agent_failed channel=%s", name)
            final = F.MQCHS_INACTIVE
        finally:
            self.senders.pop(name, None)
            # Its queue may start it again (``trigger``), as the poll would: not before POLL.
            asyncio.get_running_loop().call_later(POLL, self._wake)
            agent.row.status = final
            agent.row.substate = F.MQCHSSTATE_OTHER
            if final == F.MQCHS_STOPPED and not agent.stop_requested.is_set():
                self.control.stopped.add(name)  # retries exhausted: stays stopped until START
            if agent.row.status == F.MQCHS_INACTIVE and not agent.row.indoubt:
                self.control.channels.pop(name, None)

    def handle(self, req: Request) -> None:
        if req.verb == "START":
            self.start_sender(req.name)
            self.start_requester(req.name)
        elif req.verb == "STOP" and self._is_svrconn(req.name):
            if self.clients is not None:
                self.clients(req)
        elif req.verb == "STOP":
            found = self.senders.get(req.name)
            if found is not None:
                found[0].events.stopped_by_user()
                found[0].stop(req.mode)
            receiver = self.receivers.get(req.name)
            if receiver is not None:
                if receiver.events is not None:
                    receiver.events.stopped_by_user()
                receiver.abort()
            row = self.control.channels.get(req.name)
            if row is not None and found is None:
                row.status = req.status
        elif req.verb == "RESET":
            self.resets[req.name] = req.seq
            row = self.control.channels.get(req.name)
            if row is not None:
                row.cur_seq = row.last_seq = req.seq - 1
        elif req.verb == "PING" and req.ping is not None:
            task = asyncio.get_running_loop().create_task(self._ping(req.ping), name=f"ferrymq-ping-{req.name}")
            self.pings.add(task)
            task.add_done_callback(self.pings.discard)
        elif req.verb == "START_LISTENER":
            asyncio.get_running_loop().create_task(self.start_listener(req.name))
        elif req.verb == "STOP_LISTENER":
            asyncio.get_running_loop().create_task(self.stop_listener(req.name))

    def _is_svrconn(self, name: str) -> bool:
        chl = self.qm.state.channels.find(name)
        return chl is not None and chl.chltype == K.SVRCONN

    async def _ping(self, request: Ping) -> None:
        chl = self.qm.state.channels.find(request.name)
        if chl is None:
            reason, detail = F.MQRCCF_CHANNEL_NOT_FOUND, f"channel {request.name} was deleted"
        else:
            reason, detail = await ping(chl, self.qm.name, request.length, self.host.keys)
        log.info("event=channel_ping channel=%s bytes=%d reason=%d detail=%s", request.name, request.length, reason,
                 detail)
        if request.answer is not None:
            request.answer(reason, detail)

    def _wake(self) -> None:
        self._woken.set()

    def trigger(self) -> bool:
        """Start the sending channel of each transmission queue with messages waiting, or
        with a batch in doubt to resolve. Whether a channel is left whose queue must be
        looked at again (polled: messages arriving there wake nobody)."""
        control = self.control
        polled = False
        for chl in self.qm.state.channels:
            if chl.chltype not in K.SENDING or chl.name in self.senders or chl.name in control.stopped:
                continue
            q = self.qm.objects.find(chl.text("XMITQ"))
            watched = q is not None and q.is_local and not served_by_trigger(q.attrs)  # else its trigger message starts it
            depth = len(q.messages.by_seq) if watched and q is not None else 0
            row = control.channels.get(chl.name)
            if depth > 0 or (row is not None and row.indoubt) or any(
                    x.startswith(b"ferrymq-channel:" + chl.name.encode() + b":") for x in self.qm.in_doubt):
                self.start_sender(chl.name)
            polled = polled or (watched and chl.name not in self.senders)
        return polled

    def triggered(self) -> None:
        """Start the channels that trigger messages on SYSTEM.CHANNEL.INITQ name, unless
        STOP CHANNEL left them STOPPED (as IBM's initiator leaves them)."""
        sending = {chl.text("XMITQ"): chl.name for chl in self.qm.state.channels if chl.chltype in K.SENDING}
        names = self.initq.channels(sending)
        self.host.done()
        for name in names:
            if name in self.control.stopped:
                log.info("event=channel_trigger_ignored channel=%s reason=stopped", name)
            else:
                log.info("event=channel_triggered channel=%s", name)
                self.start_sender(name)

    async def _run(self) -> None:
        while True:
            self._woken.clear()
            poll = True
            try:
                for req in self.control.take_requests():
                    self.handle(req)
                self.triggered()
                poll = self.trigger() or not self.initq.waiting
            except Exception:  # the initiator must not die of one bad definition
                log.exception("event=channel_initiator_tick_failed")
            if not poll:
                await self._woken.wait()
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), POLL)
