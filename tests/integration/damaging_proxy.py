"""A TCP forwarder that damages one frame from the queue manager on its way to the client,
as a faulty link or middlebox would: it cuts the server's stream into GPacket frames and,
in the first frame of a chosen type, XORs one byte at a chosen offset with a mask. Every
other byte is forwarded as it came, each frame in one write."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

from tcp_proxy import TcpProxy

from ferrymq.wire.gpacket import HEADER_SIZE

_TYPE_AND_SIZE = struct.Struct(">hi")


class DamagingProxy(TcpProxy):
    def __init__(self, target_port: int, frame_type: int, offset: int, mask: int) -> None:
        self.frame_type, self.offset, self.mask = frame_type, offset, mask
        self.damaged = threading.Event()
        super().__init__(target_port)

    def _pump_down(self, src: socket.socket, dst: socket.socket) -> None:
        buf = bytearray()
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                buf += data
                while len(buf) >= HEADER_SIZE:
                    ptype, size = _TYPE_AND_SIZE.unpack_from(buf, 2)
                    if len(buf) < size:
                        break
                    frame = bytearray(buf[:size])
                    del buf[:size]
                    if ptype == self.frame_type and not self.damaged.is_set():
                        frame[self.offset] ^= self.mask
                        self.damaged.set()
                    dst.sendall(frame)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
