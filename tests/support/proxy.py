"""A TCP proxy between a client and a broker that can lose a produce acknowledgement.

It simulates exactly one fault: the broker appended a batch but its response never reached
the client (the connection dropped first). The client cannot know the write succeeded, so
it retries the same batch; only the broker's sequence check keeps that retry from becoming
a duplicate. Frames are parsed only far enough to see the api_key. Every request must get
a response (acks=0 producers would stall it): use it with acks=1 or acks=all.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

PRODUCE = 0


def _read_frame(sock: socket.socket) -> bytes | None:
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    size = struct.unpack(">i", header)[0]
    body = b""
    while len(body) < size:
        chunk = sock.recv(min(65536, size - len(body)))
        if not chunk:
            return None
        body += chunk
    return header + body


class LossyProxy:
    """Listens on 127.0.0.1:<port>, forwards to ``target``; drops chosen produce responses."""

    def __init__(self, target: tuple[str, int], drop_produce_responses: int = 1) -> None:
        self.target = target
        self.remaining_drops = drop_produce_responses
        self.dropped = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        """Requests one at a time, like a Kafka connection: forward, await reply, relay."""
        with contextlib.ExitStack() as stack:
            stack.callback(client.close)
            stack.callback(upstream.close)
            while True:
                request = _read_frame(client)
                if request is None:
                    return
                api_key = struct.unpack_from(">h", request, 4)[0]
                upstream.sendall(request)
                response = _read_frame(upstream)
                if response is None:
                    return
                if api_key == PRODUCE and self._take_drop():
                    return  # the broker has appended; the client never hears of it
                client.sendall(response)

    def _take_drop(self) -> bool:
        with self._lock:
            if self.remaining_drops <= 0:
                return False
            self.remaining_drops -= 1
            self.dropped += 1
            return True
