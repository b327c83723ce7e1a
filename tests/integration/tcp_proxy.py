"""A TCP forwarder for tests that cut connections: clients dial the proxy's fixed port,
the proxy dials the queue manager's current port (which changes when it restarts on
port 0), and ``cut()`` drops every connection at once, as a failing network would;
``swallow()`` keeps the connections open but forwards nothing more (a peer gone silent)."""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._closed = False
        self.swallowing = False
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=2)
            except OSError:
                client.close()  # nothing listening: the client sees the connection end
                continue
            upstream.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
                self.accepted += 1
            for pump, a, b in ((self._pump, client, upstream), (self._pump_down, upstream, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if not self.swallowing:
                    dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def _pump_down(self, src: socket.socket, dst: socket.socket) -> None:
        """What the queue manager sends the client (a subclass may change it on the way)."""
        self._pump(src, dst)

    def cut(self) -> int:
        """Drop every forwarded connection; returns how many were cut."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
        return len(pairs)

    def swallow(self) -> None:
        """From now on, read what either side sends and forward none of it."""
        self.swallowing = True

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()
