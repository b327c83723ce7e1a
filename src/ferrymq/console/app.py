"""The web console: a few server-rendered pages served by the queue manager process.

Off unless a port is given (``ferrymq start QM1 --console-port N``, or kept by ``create`` and
``alter``; 0 picks a free port, kept in status.json and shown by ``ferrymq status``), on
127.0.0.1 only, as the metrics endpoint. Pages (docs/operations.md, "Web console"):

| path                 | what                                                              |
|----------------------|-------------------------------------------------------------------|
| /login, /logout      | sign in with a user of the queue manager's registry; sign out     |
| /                    | the queue manager's status: listener, connections, queues, journal |
| /queues              | local queues with depth, MAXDEPTH and a sparkline of recent depths |
| /queue?name=Q        | the first messages of Q, browsed                                  |
| /message?queue=&id=  | one message: every MQMD field, its properties, its body as text and hex |
| /message/get         | GET: asks to confirm; POST: removes that message (destructive get) |
| /connections         | DISPLAY CONN                                                      |
| /channels            | DISPLAY CHANNEL and DISPLAY CHSTATUS                              |
| /mqsc                | administrators only: MQSC typed into a text box, run, its output  |

A user signs in with a password checked against the registry (scrypt, off the event loop)
and needs CONNECT authority on the queue manager; a refusal waits FAILDELAY, as CONNAUTH's.
Everything a page shows or does goes through the user's own authority: DISPLAY commands as
the user (generic ones filtered as for any client), browse and get as the user's own
connection. All engine calls happen on the event loop's thread, like every other.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import ssl
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from ferrymq.admin.session import Result, Session, reason_name
from ferrymq.console import browse, http
from ferrymq.console import pages as P
from ferrymq.console.sessions import COOKIE, LOGIN_COOKIE, Sessions, cookie, same_token
from ferrymq.console.sessions import Session as Signed
from ferrymq.engine.api import GetResult
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import TYPE_NAMES, Property
from ferrymq.server.server import QueueManagerServer
from ferrymq.store.users import MAX_PASSWORD, MAX_USER, UserRegistry
from ferrymq.wire.mqmd import IBM_NAMES

log = logging.getLogger("ferrymq.console")

SAMPLE_SECONDS = 5.0
SAMPLES = 60  # five minutes of depths per queue
LIST_LIMIT = 50  # messages a queue's page lists
MAX_FAILDELAY = 5.0  # a sign-in refusal waits FAILDELAY, at most this long
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
Page = Callable[[http.Request, Signed], Awaitable[http.Response]]


def _see_other(location: str, *headers: tuple[str, str]) -> http.Response:
    return http.Response("303 See Other", "", headers=[("Location", location), *headers])


_MEANING: dict[str, dict[object, str]] = {
    "Persistence": {C.MQPER_NOT_PERSISTENT: "not persistent", C.MQPER_PERSISTENT: "persistent",
                    C.MQPER_PERSISTENCE_AS_Q_DEF: "as the queue's DEFPSIST"},
    "MsgType": {C.MQMT_REQUEST: "request", C.MQMT_REPLY: "reply", C.MQMT_REPORT: "report",
                C.MQMT_DATAGRAM: "datagram"}}


def _mqmd_value(name: str, value: object) -> str:
    if isinstance(value, bytes):
        return value.hex()
    meaning = _MEANING.get(name, {}).get(value)
    return f"{value} ({meaning})" if meaning else str(value)


def _property_value(p: Property) -> str:
    if isinstance(p.value, (bytes, bytearray)):
        return bytes(p.value).hex()
    return "" if p.value is None else str(p.value)


def _failure(exc: MQError) -> P.Markup:
    return P.Markup(f'<p class="error">Refused: reason {exc.reason} ({P.esc(reason_name(exc.reason))})'
                    f"{P.esc(': ' + exc.detail if exc.detail else '')}</p>")


class WebConsole:
    """The console's listener and pages; ``status`` is the queue manager process's
    status.json content (pid, start time, ports), read when the status page is drawn."""

    def __init__(self, server: QueueManagerServer, registry: UserRegistry, status: Mapping[str, Any],
                 neighbours: Callable[[], list[dict[str, Any]]] = list) -> None:
        """``neighbours``: the other queue managers of this home as ``ferrymq list`` describes
        them (the status page lists them, linking to the consoles they serve)."""
        self.server = server
        self.neighbours = neighbours
        self.tls = False  # served over HTTPS
        self.qm = server.qmgr
        self.registry = registry
        self.status = status
        self.sessions = Sessions()
        self.port = 0
        self.depths: dict[str, deque[int]] = {}
        self._server: asyncio.Server | None = None
        self._sampler: asyncio.Task[None] | None = None
        self._pages: dict[tuple[str, str], Page] = {
            ("GET", "/"): self._status_page, ("GET", "/queues"): self._queues,
            ("GET", "/queue"): self._queue, ("GET", "/message"): self._message,
            ("GET", "/message/get"): self._confirm_get, ("POST", "/message/get"): self._get,
            ("GET", "/connections"): self._connections, ("GET", "/channels"): self._channels,
            ("GET", "/mqsc"): self._mqsc_page, ("POST", "/mqsc"): self._mqsc, ("POST", "/logout"): self._logout}

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self, port: int, tls: ssl.SSLContext | None = None) -> None:
        """Listen on 127.0.0.1 ``port`` (0: a free one; ``self.port`` then holds it), over
        HTTPS with ``tls`` (its handshake within the request's read time)."""
        self.tls = tls is not None
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port, reuse_address=True,
                                                  limit=http.MAX_HEAD, ssl=tls,
                                                  ssl_handshake_timeout=http.READ_TIMEOUT if tls else None)
        self.port = self._server.sockets[0].getsockname()[1]
        self.sample()
        self._sampler = asyncio.get_running_loop().create_task(self._sample_every(), name="ferrymq-console-sampler")
        log.info("event=console_listening host=127.0.0.1 port=%d tls=%s", self.port, "on" if self.tls else "off")

    async def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def sample(self) -> None:
        """Keep every local queue's depth now (the sparklines); forget deleted queues."""
        queues = {q.name: q.messages.depth for q in self.qm.objects.queues.values() if q.is_local}
        for name in set(self.depths) - set(queues):
            del self.depths[name]
        for name, depth in queues.items():
            self.depths.setdefault(name, deque(maxlen=SAMPLES)).append(depth)

    async def _sample_every(self) -> None:
        while True:
            await asyncio.sleep(SAMPLE_SECONDS)
            self.sample()

    # -- one request -------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                request = await http.read_request(reader)
                response = await self.respond(request)
            except http.BadRequest as exc:
                response = http.Response(exc.status, P.esc(exc.status), "text/plain; charset=utf-8")
            writer.write(http.encode(response))
            await writer.drain()
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception:  # one broken page must not end the listener; it is logged
            log.exception("event=console_request_failed")
        finally:
            writer.close()

    async def respond(self, req: http.Request) -> http.Response:
        """Route one request: the Host must be a loopback name (no DNS rebinding), a page
        needs a live session, a POST its CSRF token and, when the browser names one, this origin."""
        host = req.headers.get("host", "")
        if host.rsplit(":", 1)[0] not in _LOOPBACK_HOSTS:
            return http.Response("421 Misdirected Request", "", "text/plain; charset=utf-8")
        origin = req.headers.get("origin")
        if req.method == "POST" and origin is not None and origin != f"{'https' if self.tls else 'http'}://{host}":
            return http.Response("403 Forbidden", "cross-origin form refused", "text/plain; charset=utf-8")
        if req.path == "/login":
            return await (self._login(req) if req.method == "POST" else self._login_page())
        page = self._pages.get((req.method, req.path))
        if page is None:
            known = any(path == req.path for _, path in self._pages)
            return http.Response("405 Method Not Allowed" if known else "404 Not Found", "",
                                 "text/plain; charset=utf-8")
        signed = self._signed_in(req)
        if signed is None:
            return _see_other("/login")
        if req.method == "POST" and not same_token(req.form.get("csrf", ""), signed.csrf):
            return http.Response("403 Forbidden", "missing or wrong CSRF token", "text/plain; charset=utf-8")
        return await page(req, signed)

    def _signed_in(self, req: http.Request) -> Signed | None:
        signed = self.sessions.find(req.cookies.get(COOKIE))
        if signed is None:
            return None
        self.registry.refresh()
        if not self.registry.known(signed.user):  # deleted since: the session ends with the user
            self.sessions.close(signed.token)
            return None
        return signed

    def _page(self, signed: Signed, title: str, content: P.Markup, status: str = "200 OK") -> http.Response:
        return http.Response(status, P.layout(self.qm.name, title, content, user=signed.user,
                                              admin=self.qm.state.authority.is_admin(signed.user),
                                              csrf=signed.csrf))

    # -- signing in and out ------------------------------------------------------------------

    async def _login_page(self, user: str = "", refused: bool = False) -> http.Response:
        token = secrets.token_urlsafe(32)
        body = P.layout(self.qm.name, "Sign in", P.login_form(token, user, refused))
        return http.Response("401 Unauthorized" if refused else "200 OK", body,
                             headers=[("Set-Cookie", cookie(LOGIN_COOKIE, token, 600))])

    async def _login(self, req: http.Request) -> http.Response:
        if not same_token(req.form.get("csrf", ""), req.cookies.get(LOGIN_COOKIE, "")):
            return http.Response("403 Forbidden", "missing or wrong sign-in token", "text/plain; charset=utf-8")
        user, password = req.form.get("user", "").strip(), req.form.get("password", "")
        ok = False
        if 0 < len(user) <= MAX_USER and 0 < len(password.encode("utf-8", "surrogatepass")) <= MAX_PASSWORD:
            self.registry.refresh()
            loop = asyncio.get_running_loop()
            ok = await loop.run_in_executor(None, self.registry.verify, user, password) and self._may_connect(user)
        if not ok:
            log.warning("event=console_sign_in_refused user=%r", user[:MAX_USER + 4])  # as typed: quoted
            await asyncio.sleep(min(float(self.qm.state.authority.authinfo.faildelay), MAX_FAILDELAY))
            return await self._login_page(user, refused=True)
        signed = self.sessions.open(user)
        log.info("event=console_signed_in user=%s", user)
        return _see_other("/", ("Set-Cookie", cookie(COOKIE, signed.token)),
                          ("Set-Cookie", cookie(LOGIN_COOKIE, "", 0)))

    def _may_connect(self, user: str) -> bool:
        """CONNECT authority, checked as for any connection (an authority event if refused)."""
        try:
            hconn = self.qm.connect(appl_name=browse.APPL_NAME, user=user)
        except MQError:
            return False
        self.qm.disconnect(hconn)
        return True

    async def _logout(self, req: http.Request, signed: Signed) -> http.Response:
        self.sessions.close(signed.token)
        return _see_other("/login", ("Set-Cookie", cookie(COOKIE, "", 0)))

    # -- pages -------------------------------------------------------------------------------

    def _commands(self, user: str) -> Session:
        """An MQSC session whose commands run with ``user``'s authority, as the command
        server runs a client's."""
        return Session(lambda cmd: run_command(self.qm, cmd, user))

    async def _status_page(self, req: http.Request, signed: Signed) -> http.Response:
        st, server = self.status, self.server
        local = [q for q in self.qm.objects.queues.values() if q.is_local]
        health = server.committer.health()
        rows: list[tuple[str, object]] = [
            ("Queue manager", self.qm.name), ("Status", "quiescing" if server.quiescing else "running"),
            ("Started", st.get("started", "")), ("Process", st.get("pid", "")),
            ("Listener", f"{st.get('host', server.host)}({server.port})"),
            ("Connections", len(self.qm.connections)), ("Client connections", len(server.handlers)),
            ("Local queues", len(local)), ("Messages on local queues", sum(q.messages.depth for q in local)),
            ("Journal", f"{health['state']} since {health['since']}"),
            ("Journal disk free", f"{health['free_bytes']:,} bytes"),
            ("Metrics", f"http://127.0.0.1:{st['metrics_port']}/metrics" if st.get("metrics_port") else "off"),
            ("Now", datetime.now(UTC).isoformat(timespec="seconds"))]
        return self._page(signed, "Status", P.join([P.fields(rows), self._home()]))

    def _home(self) -> P.Markup:
        """The other queue managers of this home, as ``ferrymq list`` shows them; a running
        one's console is linked (each console signs its own users in)."""
        try:
            others = self.neighbours()
        except Exception:  # the home being read as it changes must not break the status page
            log.exception("event=console_home_unreadable")
            return P.Markup('<p class="note">The other queue managers of this home could not be read.</p>')
        rows = []
        for row in others:
            port = row.get("console_port")
            scheme = "https" if row.get("console_tls") else "http"
            console: object = P.Markup(f'<a href="{P.esc(f"{scheme}://127.0.0.1:{int(port)}/")}">'
                                       f"{P.esc(f'{scheme}://127.0.0.1:{int(port)}/')}</a>") if port else "-"
            where = f"{row.get('host')}({row.get('port')})" if row.get("port") else "-"
            rows.append((row.get("name", ""), row.get("status", ""), row.get("pid") or "-", where, console))
        return P.join([P.Markup("<h2>Queue managers in this home</h2>"),
                       P.table(["Name", "Status", "Process", "Listener", "Console"], rows)])

    async def _queues(self, req: http.Request, signed: Signed) -> http.Response:
        system = req.query.get("system") == "1"
        result = self._commands(signed.user).execute("DISPLAY QLOCAL(*) CURDEPTH MAXDEPTH")
        if not result.ok:
            return self._page(signed, "Queues", self._result_failure(result))
        rows = []
        for obj in result.objects:
            name = str(obj.get("QUEUE", ""))
            if name.startswith("SYSTEM.") and not system:
                continue
            history = [*self.depths.get(name, ()), int(obj.get("CURDEPTH", 0))]
            rows.append((P.link("/queue", name, name=name), obj.get("CURDEPTH", ""), obj.get("MAXDEPTH", ""),
                         P.sparkline(history)))
        toggle = P.link("/queues", "hide SYSTEM.* queues") if system else P.link("/queues", "show SYSTEM.* queues",
                                                                                  system="1")
        note = P.Markup(f'<p class="note">Depth sampled every {SAMPLE_SECONDS:g} s, the last {SAMPLES} samples; '
                        f"{toggle}</p>")
        return self._page(signed, "Queues", P.join([note, P.table(("Queue", "Depth", "Max depth", "Recent depth"),
                                                                   rows, numeric=(1, 2))]))

    async def _queue(self, req: http.Request, signed: Signed) -> http.Response:
        name = req.query.get("name", "")
        try:
            got = browse.listing(self.qm, signed.user, name, LIST_LIMIT)
        except MQError as exc:
            return self._page(signed, f"Queue {name}", _failure(exc))
        rows = [(i + 1, P.link("/message", m.md.msg_id.hex(), queue=name, id=m.md.msg_id.hex()),
                 f"{m.md.put_date} {m.md.put_time}", m.md.persistence, m.md.priority, m.md.format,
                 m.data_length, m.data.decode("utf-8", "replace")[:80]) for i, m in enumerate(got)]
        more = f" (the first {LIST_LIMIT})" if len(got) == LIST_LIMIT else ""
        note = P.Markup(f'<p class="note">Browsed in the order a getter would take them{P.esc(more)}; nothing is '
                        f"removed here.</p>")
        return self._page(signed, f"Queue {name}", P.join([note, P.table(
            ("#", "MsgId", "Put (GMT)", "Persistence", "Priority", "Format", "Length", "Start of body"), rows,
            numeric=(0, 3, 4, 6))]))

    def _msg_id(self, req: http.Request) -> bytes | None:
        raw = req.query.get("id") or req.form.get("id", "")
        try:
            msg_id = bytes.fromhex(raw)
        except ValueError:
            return None
        return msg_id if len(msg_id) == 24 else None

    async def _message(self, req: http.Request, signed: Signed) -> http.Response:
        queue, msg_id = req.query.get("queue", ""), self._msg_id(req)
        if msg_id is None:
            return self._page(signed, "Message", P.Markup('<p class="error">No such message id.</p>'), "404 Not Found")
        try:
            got = browse.one(self.qm, signed.user, queue, msg_id)
        except MQError as exc:
            return self._page(signed, "Message", _failure(exc))
        if got is None:
            return self._page(signed, "Message", P.Markup('<p class="error">That message is no longer on the queue.'
                                                          '</p>'), "404 Not Found")
        remove = P.link("/message/get", "Remove this message from the queue...", queue=queue, id=msg_id.hex())
        return self._page(signed, f"Message on {queue}", P.join([self._shown(got), P.Markup(f"<p>{remove}</p>")]))

    def _shown(self, got: GetResult) -> P.Markup:
        md = got.md.asdict()
        mqmd = P.fields((ibm, _mqmd_value(ibm, value)) for ibm, value in zip(IBM_NAMES, md.values(), strict=True))
        props = [(name, TYPE_NAMES.get(p.type, p.type), _property_value(p))
                 for name, p in (got.properties.typed_items() if got.properties else ())]
        cut = (f"the first {len(got.data):,} of {got.data_length:,} bytes" if len(got.data) < got.data_length
               else f"{got.data_length:,} bytes")
        # The body's text first (what people look for), its hex last (the longest).
        return P.join([P.Markup(f'<h2>Body as text (UTF-8)</h2><p class="note">{P.esc(cut)}</p>'
                                f'<pre id="body-text">{P.esc(got.data.decode("utf-8", "replace"))}</pre>'
                                "<h2>Properties</h2>"), P.table(("Name", "Type", "Value"), props),
                       P.Markup("<h2>Descriptor (MQMD)</h2>"), mqmd,
                       P.Markup(f'<h2>Body as hex</h2><pre id="body-hex">{P.esc(P.hexdump(got.data))}</pre>')])

    async def _confirm_get(self, req: http.Request, signed: Signed) -> http.Response:
        queue, msg_id = req.query.get("queue", ""), self._msg_id(req)
        if msg_id is None:
            return self._page(signed, "Remove a message", P.Markup('<p class="error">No such message id.</p>'),
                              "404 Not Found")
        ask = P.Markup(f"<p>Remove message <code>{P.esc(msg_id.hex())}</code> from queue <code>{P.esc(queue)}</code>? "
                       f"This is a destructive get: the message cannot be put back from here.</p>")
        button = P.post_button("/message/get", "Remove the message", signed.csrf, {"queue": queue, "id": msg_id.hex()},
                               danger=True)
        back = P.link("/message", "No, keep it", queue=queue, id=msg_id.hex())
        return self._page(signed, "Remove a message", P.join([ask, button, P.Markup(f"<p>{back}</p>")]))

    async def _get(self, req: http.Request, signed: Signed) -> http.Response:
        queue, msg_id = req.form.get("queue", ""), self._msg_id(req)
        if msg_id is None:
            return self._page(signed, "Remove a message", P.Markup('<p class="error">No such message id.</p>'),
                              "404 Not Found")
        try:
            got = browse.take(self.qm, signed.user, queue, msg_id)
        except MQError as exc:
            return self._page(signed, "Remove a message", _failure(exc))
        finally:
            await self.server.settle()
        if got is None:
            return self._page(signed, "Remove a message", P.Markup('<p class="error">That message is no longer on '
                                                                   'the queue.</p>'), "404 Not Found")
        log.info("event=console_message_removed user=%s queue=%r msg_id=%s", signed.user, queue, msg_id.hex())
        done = P.Markup(f'<p id="removed">Removed from {P.esc(queue)}. What it held:</p>')
        return self._page(signed, "Message removed", P.join([done, self._shown(got)]))

    def _result_failure(self, result: Result) -> P.Markup:
        return P.Markup(f'<pre class="error">{P.esc(chr(10).join(result.messages))}</pre>')

    def _display(self, user: str, command: str, columns: tuple[str, ...]) -> P.Markup:
        result = self._commands(user).execute(command)
        if not result.ok:
            return self._result_failure(result)
        return P.table(columns, ([obj.get(c, "") for c in columns] for obj in result.objects))

    async def _connections(self, req: http.Request, signed: Signed) -> http.Response:
        return self._page(signed, "Connections", self._display(
            signed.user, "DISPLAY CONN(*) TYPE(CONN) ALL",
            ("CONN", "APPLTAG", "APPLTYPE", "USERID", "CHANNEL", "CONNAME", "UOWSTATE", "HANDLES")))

    async def _channels(self, req: http.Request, signed: Signed) -> http.Response:
        defined = self._display(signed.user, "DISPLAY CHANNEL(*) ALL", ("CHANNEL", "CHLTYPE", "CONNAME", "XMITQ",
                                                                        "DESCR"))
        running = self._display(signed.user, "DISPLAY CHSTATUS(*) ALL", ("CHANNEL", "CHLTYPE", "CONNAME", "STATUS",
                                                                         "MSGS", "LSTMSGDA", "LSTMSGTI"))
        return self._page(signed, "Channels", P.join([P.Markup("<h2>Definitions</h2>"), defined,
                                                      P.Markup("<h2>Status</h2>"), running]))

    def _admin_only(self, signed: Signed) -> http.Response | None:
        if self.qm.state.authority.is_admin(signed.user):
            return None
        return self._page(signed, "MQSC", P.Markup('<p class="error">MQSC here is for administrators (group mqm).'
                                                   "</p>"), "403 Forbidden")

    async def _mqsc_page(self, req: http.Request, signed: Signed) -> http.Response:
        return self._admin_only(signed) or self._page(signed, "MQSC", P.mqsc_form(signed.csrf))

    async def _mqsc(self, req: http.Request, signed: Signed) -> http.Response:
        refused = self._admin_only(signed)
        if refused is not None:
            return refused
        script = req.form.get("script", "")
        session = self._commands(signed.user)
        lines: list[str] = []
        try:
            for result in session.script(script.splitlines()):
                lines += [f"{result.number:>6} : {result.command}", *result.messages, ""]
        finally:
            for ping in self.qm.state.channel_control.take_deferred():
                ping.answer = lambda reason, detail: None  # PING CHANNEL's answer is not waited for here
            await self.server.settle()
        lines += session.summary()
        log.info("event=console_mqsc user=%s read=%d failed=%d", signed.user, session.read,
                 session.failed + session.syntax_errors)
        return self._page(signed, "MQSC", P.mqsc_form(signed.csrf, script, "\n".join(lines)))

