"""The web console's parts without a browser: request parsing and its bounds, escaping,
sessions, and the gate every request passes (Host, origin, session, CSRF, sign-in)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path

import pytest
from engine_helpers import Env
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.console import browse, http
from ferrymq.console import pages as P
from ferrymq.console.app import WebConsole
from ferrymq.console.sessions import COOKIE, IDLE, LOGIN_COOKIE, MAX_SESSIONS, Sessions, same_token
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.server.server import QueueManagerServer
from ferrymq.store.users import UserRegistry


def test_a_request_head_is_parsed() -> None:
    req = http.parse_head(b"GET /queue?name=A%2FB&x= HTTP/1.1\r\nHost: 127.0.0.1:5\r\n"
                          b"Cookie: a=1; ferrymq_console=tok\r\n\r\n")
    assert (req.method, req.path, req.query) == ("GET", "/queue", {"name": "A/B", "x": ""})
    assert req.headers["host"] == "127.0.0.1:5" and req.cookies["ferrymq_console"] == "tok"


@pytest.mark.parametrize(("head", "status"), [
    (b"GET / HTTP/1.1 extra\r\n\r\n", "400 Bad Request"),
    (b"PUT / HTTP/1.1\r\n\r\n", "405 Method Not Allowed"),
    (b"GET http://x/ HTTP/1.1\r\n\r\n", "400 Bad Request"),
    (b"GET / HTTP/1.1\r\nNoColon\r\n\r\n", "400 Bad Request"),
    (b"GET /\xff HTTP/1.1\r\n\r\n", "400 Bad Request"),
    (b"GET //[ HTTP/1.1\r\n\r\n", "400 Bad Request"),  # urlsplit's ValueError was logged as the console's failure
])
def test_a_malformed_head_is_refused(head: bytes, status: str) -> None:
    with pytest.raises(http.BadRequest) as refused:
        http.parse_head(head)
    assert refused.value.status == status


_ASCII = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=30)
# What URL parsing looks at, in pieces.
_URLISH = st.lists(st.sampled_from(["/", "//", "[", "]", "?", "#", "%", "%zz", ":", "@", "&", "=", ";", "a"]),
                   max_size=8).map("".join)


@settings(max_examples=300)
@given(method=st.sampled_from(["GET", "POST", "PUT", ""]), target=st.one_of(_ASCII, _URLISH.map("/".__add__)), version=st.sampled_from(["HTTP/1.1", "x"]),
       headers=st.lists(_ASCII, max_size=4), noise=st.binary(max_size=40))
def test_any_head_is_parsed_or_refused_with_a_status(method: str, target: str, version: str, headers: list[str],
                                                     noise: bytes) -> None:
    """Whatever a peer sends as a head: a Request or BadRequest, never another exception
    (the listener logs one as its own failure and answers nothing)."""
    for head in (f"{method} {target} {version}\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode(), noise:
        with contextlib.suppress(http.BadRequest):
            http.parse_head(head)


async def _read(raw: bytes) -> http.Request:
    reader = asyncio.StreamReader(limit=http.MAX_HEAD)
    reader.feed_data(raw)
    reader.feed_eof()
    return await http.read_request(reader)


async def test_a_form_is_read_and_bounds_hold() -> None:
    body = b"csrf=t&script=DISPLAY+QMGR"
    req = await _read(b"POST /mqsc HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert req.form == {"csrf": "t", "script": "DISPLAY QMGR"}
    for raw, status in [
        (b"POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (http.MAX_BODY + 1), "413 Content Too Large"),
        (b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nab", "415 Unsupported Media Type"),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "411 Length Required"),
        (b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400 Bad Request"),
        (b"GET / HTTP/1.1\r\nX: " + b"a" * http.MAX_HEAD + b"\r\n\r\n", "431 Request Header Fields Too Large"),
    ]:
        with pytest.raises(http.BadRequest) as refused:
            await _read(raw)
        assert refused.value.status == status


def test_every_answer_forbids_script_and_framing() -> None:
    raw = http.encode(http.Response(body="é"))
    head = raw.split(b"\r\n\r\n")[0].decode()
    assert "Content-Length: 2" in head and "script-src" not in head and "default-src 'none'" in head
    assert "X-Frame-Options: DENY" in head and "nosniff" in head


def test_everything_shown_is_escaped() -> None:
    evil = "<script>alert(1)</script>\"'&"
    for markup in (P.table(["h"], [[evil]]), P.fields([(evil, evil)]), P.link("/q", evil, name=evil),
                   P.mqsc_form("t", evil, evil), P.login_form(evil, evil)):
        assert "<script>" not in markup and "&lt;script&gt;" in markup
    page = P.layout(evil, evil, P.esc(evil), user=evil, csrf=evil)
    assert "<script>" not in page and page.count("&lt;script&gt;") >= 4


def test_sparkline_and_hexdump() -> None:
    svg = P.sparkline([0, 5, 10], width=100, height=22)
    points = re.search(r'points="([^"]+)"', svg)
    assert points is not None and points.group(1) == "0.0,21.0 50.0,11.0 100.0,1.0"
    assert P.sparkline([]) == ""
    assert P.hexdump(b"AB\x00" * 6).splitlines() == [
        "00000000  41 42 00 41 42 00 41 42 00 41 42 00 41 42 00 41  AB.AB.AB.AB.AB.A",
        "00000010  42 00                                            B."]


def test_sessions_end_when_idle_and_stay_bounded() -> None:
    now = [0.0]
    sessions = Sessions(clock=lambda: now[0])
    s = sessions.open("app")
    now[0] = IDLE - 1
    assert sessions.find(s.token) is s
    now[0] += IDLE + 1
    assert sessions.find(s.token) is None and sessions.find(None) is None
    for _ in range(MAX_SESSIONS + 5):
        sessions.open("app")
    assert len(sessions) == MAX_SESSIONS
    assert same_token("abc", "abc") and not same_token("", "") and not same_token("abd", "abc")


@pytest.fixture
def console(tmp_path: Path) -> WebConsole:
    env = Env()
    registry = UserRegistry(tmp_path)
    registry.add("admin", "right-pw", ["mqm"])
    registry.add("app", "app-pw")
    env.qm.state.authority.groups_of = registry.groups_of  # as the queue manager process wires it
    server = QueueManagerServer(env.qm, port=0)
    return WebConsole(server, registry, {"pid": 1})


def _req(method: str, path: str, *, host: str = "127.0.0.1:9", cookies: dict[str, str] | None = None,
         form: dict[str, str] | None = None, origin: str | None = None) -> http.Request:
    headers = {"host": host} | ({"origin": origin} if origin else {})
    return http.Request(method, path, {}, headers, cookies or {}, form or {})


def _cookies(resp: http.Response) -> dict[str, str]:
    out = {}
    for k, v in resp.headers:
        if k == "Set-Cookie":
            name, _, rest = v.partition("=")
            out[name] = rest.split(";")[0]
    return out


async def _sign_in(console: WebConsole, user: str, password: str) -> http.Response:
    page = await console.respond(_req("GET", "/login"))
    token = _cookies(page)[LOGIN_COOKIE]
    return await console.respond(_req("POST", "/login", cookies={LOGIN_COOKIE: token}, origin="http://127.0.0.1:9",
                                      form={"csrf": token, "user": user, "password": password}))


async def test_the_gate(console: WebConsole) -> None:
    assert (await console.respond(_req("GET", "/", host="evil.example:9"))).status.startswith("421")
    assert (await console.respond(_req("GET", "/nothing"))).status.startswith("404")
    assert (await console.respond(_req("POST", "/queues"))).status.startswith("405")
    unsigned = await console.respond(_req("GET", "/queues"))
    assert unsigned.status.startswith("303") and ("Location", "/login") in unsigned.headers
    # A sign-in needs the token of its own form.
    assert (await console.respond(_req("POST", "/login", form={"user": "admin", "password": "right-pw"}))
            ).status.startswith("403")
    console.qm.state.authority.alter_authinfo(faildelay=0)
    refused = await _sign_in(console, "admin", "wrong-pw")
    assert refused.status.startswith("401") and COOKIE not in _cookies(refused)
    signed = await _sign_in(console, "admin", "right-pw")
    assert signed.status.startswith("303")
    token = _cookies(signed)[COOKIE]
    session = console.sessions.find(token)
    assert session is not None
    page = await console.respond(_req("GET", "/", cookies={COOKIE: token}))
    assert page.status == "200 OK" and "QM1" in page.body and 'href="/mqsc"' in page.body
    # A POST needs the session's CSRF token and, when the browser names one, this origin.
    form = {"script": "DEFINE QLOCAL(X)", "csrf": "wrong"}
    assert (await console.respond(_req("POST", "/mqsc", cookies={COOKIE: token}, form=form))).status.startswith("403")
    form["csrf"] = session.csrf
    assert (await console.respond(_req("POST", "/mqsc", cookies={COOKIE: token}, form=form,
                                       origin="http://evil.example"))).status.startswith("403")
    assert "X" not in console.qm.objects.queues
    # The registry decides: a deleted user's session ends.
    console.registry.delete("admin")
    assert (await console.respond(_req("GET", "/", cookies={COOKIE: token}))).status.startswith("303")


async def test_a_refused_name_is_logged_quoted(console: WebConsole, caplog: pytest.LogCaptureFixture) -> None:
    console.qm.state.authority.alter_authinfo(faildelay=0)
    assert (await _sign_in(console, "x\nevent=y", "pw")).status.startswith("401")
    assert "user='x\\nevent=y'" in caplog.text and "\nevent=y" not in caplog.text


async def test_mqsc_is_for_administrators(console: WebConsole) -> None:
    token = _cookies(await _sign_in(console, "app", "app-pw"))[COOKIE]
    page = await console.respond(_req("GET", "/mqsc", cookies={COOKIE: token}))
    assert page.status.startswith("403") and 'href="/mqsc"' not in page.body


def test_browse_look_and_take_by_msg_id() -> None:
    env = Env()
    env.define("APP.Q")
    h = env.open("APP.Q")
    first, second = env.put(h, b"one").md.msg_id, env.put(h, b"two" * 200).md.msg_id
    listed = browse.listing(env.qm, "tester", "APP.Q", 10)
    assert [m.md.msg_id for m in listed] == [first, second]
    assert len(listed[1].data) == browse.LIST_BYTES and listed[1].data_length == 600  # cut, its length kept
    shown = browse.one(env.qm, "tester", "APP.Q", second)
    assert shown is not None and shown.data == b"two" * 200
    taken = browse.take(env.qm, "tester", "APP.Q", first)
    assert taken is not None and taken.data == b"one"
    assert browse.take(env.qm, "tester", "APP.Q", first) is None  # gone: nothing else is taken instead
    assert browse.one(env.qm, "tester", "APP.Q", first) is None
    assert env.depth("APP.Q") == 1 and len(env.qm.connections) == 1  # the console's connections all ended
    with pytest.raises(MQError) as unknown:
        browse.listing(env.qm, "tester", "NO.SUCH.Q", 10)
    assert unknown.value.reason == C.MQRC_UNKNOWN_OBJECT_NAME
