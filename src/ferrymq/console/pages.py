"""The web console's HTML, rendered on the server: no script, one inline style sheet.

Everything that comes from the queue manager (names, descriptors, properties, message
bodies, command output) or from the request goes through ``esc`` before it reaches a page;
the only unescaped text is ``Markup``, which this module builds itself from escaped parts.
So a message body holding ``<script>`` is shown as those characters, never run.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from urllib.parse import urlencode

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1f3b57;color:#fff;padding:.6em 1em;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}
header a{color:#fff;text-decoration:none}header .qm{font-weight:bold;font-size:1.1em}
header form{margin-left:auto}main{padding:1em 1.5em}
table{border-collapse:collapse;background:#fff;margin:.5em 0 1.5em}
td,th{border:1px solid #d5d9e0;padding:.25em .6em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#eef1f5}pre{background:#fff;border:1px solid #d5d9e0;padding:.6em;overflow:auto;max-height:40em}
.num{text-align:right;font-variant-numeric:tabular-nums}.error{color:#a11}.note{color:#555}
textarea{width:100%;max-width:60em;font-family:monospace}svg.spark{vertical-align:middle}
button{padding:.3em .9em}.danger{background:#a11;color:#fff;border:1px solid #700}
"""


class Markup(str):
    """HTML this module built from escaped parts: inserted as it is."""


def esc(value: object) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[object]) -> Markup:
    return Markup("".join(esc(p) for p in parts))


def link(path: str, text: object, **query: str) -> Markup:
    href = path + ("?" + urlencode(query) if query else "")
    return Markup(f'<a href="{esc(href)}">{esc(text)}</a>')


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: Sequence[int] = ()) -> Markup:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(f'<td class="num">{esc(c)}</td>' if i in numeric else f"<td>{esc(c)}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    if not body:
        body.append(f'<tr><td colspan="{len(headers)}" class="note">none</td></tr>')
    return Markup(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def fields(pairs: Iterable[tuple[str, object]]) -> Markup:
    """A two-column table of names and values."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pairs)
    return Markup(f"<table><tbody>{rows}</tbody></table>")


def sparkline(values: Sequence[int], width: int = 120, height: int = 24) -> Markup:
    """The depth history as an inline SVG line (the latest value at the right)."""
    if not values:
        return Markup("")
    top = max(max(values), 1)
    step = width / max(len(values) - 1, 1)
    points = " ".join(f"{i * step:.1f},{height - 1 - (v / top) * (height - 2):.1f}" for i, v in enumerate(values))
    title = f"depth over the last {len(values)} samples, highest {max(values)}"
    return Markup(f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
                  f'role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
                  f'<polyline fill="none" stroke="#2a6fb0" stroke-width="1.5" points="{points}"/></svg>')


def hexdump(data: bytes) -> str:
    """16 bytes a line: offset, hex, and the printable ASCII (others as '.')."""
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off:off + 16]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{off:08x}  {chunk.hex(' '):<47}  {text}")
    return "\n".join(lines)


def hidden_csrf(token: str) -> Markup:
    return Markup(f'<input type="hidden" name="csrf" value="{esc(token)}">')


def post_button(action: str, label: str, csrf: str, extra: dict[str, str] | None = None,
                danger: bool = False) -> Markup:
    inputs = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in (extra or {}).items())
    cls = ' class="danger"' if danger else ""
    return Markup(f'<form method="post" action="{esc(action)}">{hidden_csrf(csrf)}{inputs}'
                  f'<button type="submit"{cls}>{esc(label)}</button></form>')


def layout(qmgr: str, title: str, content: Markup, *, user: str = "", admin: bool = False, csrf: str = "") -> str:
    nav = ""
    if user:
        items = [link("/", "Status"), link("/queues", "Queues"), link("/connections", "Connections"),
                 link("/channels", "Channels")]
        if admin:
            items.append(link("/mqsc", "MQSC"))
        nav = "".join(items) + (f'<form method="post" action="/logout">{hidden_csrf(csrf)}'
                                f'<span>{esc(user)}</span> <button type="submit">Sign out</button></form>')
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)} - {esc(qmgr)}</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{STYLE}</style></head>'
            f'<body><header><span class="qm">ferrymq {esc(qmgr)}</span>{nav}</header>'
            f"<main><h1>{esc(title)}</h1>{content}</main></body></html>")


def login_form(token: str, user: str = "", refused: bool = False) -> Markup:
    error = '<p class="error" id="refused">Sign-in refused: wrong user or password, or no authority to connect.</p>' \
        if refused else ""
    return Markup(f'{error}<form method="post" action="/login"><input type="hidden" name="csrf" value="{esc(token)}">'
                  f'<p><label>User <input name="user" id="user" autocomplete="username" value="{esc(user)}"></label></p>'
                  f'<p><label>Password <input name="password" id="password" type="password" '
                  f'autocomplete="current-password"></label></p>'
                  f'<p><button type="submit" id="sign-in">Sign in</button></p></form>'
                  f'<p class="note">Users and passwords are the queue manager\'s own (ferrymq user add).</p>')


def mqsc_form(csrf: str, script: str = "", output: str = "") -> Markup:
    shown = f'<h2>Output</h2><pre id="mqsc-output">{esc(output)}</pre>' if output else ""
    return Markup(f'<form method="post" action="/mqsc">{hidden_csrf(csrf)}'
                  f'<p><textarea name="script" id="script" rows="8">{esc(script)}</textarea></p>'
                  f'<p><button type="submit" id="run">Run</button> <span class="note">Each command is checked '
                  f'against your authority, as any command is.</span></p></form>{shown}')
