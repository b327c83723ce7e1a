"""The little HTTP/1.1 the web console speaks: one request per connection, read with bounds.

A request line and headers of at most ``MAX_HEAD`` bytes, a body (forms only,
``application/x-www-form-urlencoded``) of at most ``MAX_BODY`` bytes announced by
Content-Length (no chunked bodies), all within ``READ_TIMEOUT`` seconds; anything else is
answered with its 4xx status and the connection closed. Every answer carries the headers
that keep a browser from running, framing or sniffing anything the page did not mean:
the pages hold no script at all, so the policy allows none.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlsplit

MAX_HEAD = 16384
MAX_BODY = 65536  # an MQSC script typed into the text box fits with room to spare
READ_TIMEOUT = 10.0
MAX_FIELDS = 64

# No script, no plug-ins, no framing, forms only to this origin; styles are one inline sheet.
SECURITY_HEADERS = (
    ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),  # no-referrer would make form POSTs say Origin: null
    ("Cache-Control", "no-store"),
)


class BadRequest(Exception):
    """A request refused before it reached a page: ``status`` says why."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case; a repeated header keeps its last value
    cookies: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Response:
    status: str = "200 OK"
    body: str = ""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


def _pairs(text: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FIELDS)
    except ValueError:  # more than MAX_FIELDS fields
        raise BadRequest("400 Bad Request") from None
    return dict(pairs)


def parse_head(head: bytes) -> Request:
    """The request line and headers (``head`` ends with the blank line).

    Raises:
        BadRequest: a malformed request line or header, or a method other than GET/POST.
    """
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise BadRequest("400 Bad Request") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("400 Bad Request")
    method, target = parts[0], parts[1]
    if method not in ("GET", "POST"):
        raise BadRequest("405 Method Not Allowed")
    if not target.startswith("/"):
        raise BadRequest("400 Bad Request")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest("400 Bad Request")
        headers[name.lower()] = value.strip()
    cookies: dict[str, str] = {}
    if "cookie" in headers:
        jar: SimpleCookie = SimpleCookie()
        with contextlib.suppress(CookieError):  # a cookie this console never set: ignored
            jar.load(headers["cookie"])
        cookies = {k: m.value for k, m in jar.items()}
    try:
        url = urlsplit(target)
    except ValueError:  # "//[": a netloc that is no IPv6 address
        raise BadRequest("400 Bad Request") from None
    return Request(method, url.path, _pairs(url.query), headers, cookies)


async def read_request(reader: asyncio.StreamReader) -> Request:
    """One request, its form body parsed.

    Raises:
        BadRequest: see the module docstring.
        TimeoutError, ConnectionError, asyncio.IncompleteReadError: the peer was too slow or left.
    """
    async with asyncio.timeout(READ_TIMEOUT):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise BadRequest("431 Request Header Fields Too Large") from None
        if len(head) > MAX_HEAD:
            raise BadRequest("431 Request Header Fields Too Large")
        request = parse_head(head)
        if "transfer-encoding" in request.headers:
            raise BadRequest("411 Length Required")
        raw_length = request.headers.get("content-length", "0")
        if not raw_length.isdigit() or len(raw_length) > 9:
            raise BadRequest("400 Bad Request")
        length = int(raw_length)
        if length > MAX_BODY:
            raise BadRequest("413 Content Too Large")
        if request.method == "POST":
            body = await reader.readexactly(length)
            if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                raise BadRequest("415 Unsupported Media Type")
            try:
                request.form = _pairs(body.decode("utf-8"))
            except UnicodeDecodeError:
                raise BadRequest("400 Bad Request") from None
        return request


def encode(response: Response) -> bytes:
    """The response as bytes, the connection to be closed after it."""
    data = response.body.encode("utf-8")
    lines = [f"HTTP/1.1 {response.status}", f"Content-Type: {response.content_type}",
             f"Content-Length: {len(data)}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (*SECURITY_HEADERS, *response.headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data
