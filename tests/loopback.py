"""A loopback HTTP server for the download tests: never the internet."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GENEROUS = 120.0
"""The download time-out of a fetch from this server that should succeed: met only if
something hangs, never by a busy machine (a test of a time-out sets its own, short one
against a server that does not answer)."""


class LoopbackServer:
    """A loopback HTTP server whose answer per path is set by the test.

    ``routes[path]`` is bytes (200), an int (that status), ``("short", bytes)`` (half the
    announced body, then the connection closes), ``("status", code, body)`` (that status
    with that body), ``("endless", length)`` (zeros without
    end, announcing ``length`` bytes, or no length for None, until the client goes or the
    test ends), ``("redirect", path)`` (a 302 to that path) or ``"hang"`` (answer nothing
    until the test ends, longer than any timeout used here).
    """

    def __init__(self) -> None:
        self.routes: dict[str, object] = {}
        self.requests: list[str] = []
        self.sent = 0  # bytes of "endless" answers written
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                answer = server.routes.get(self.path, 404)
                if answer == "hang":
                    server.release.wait(10)
                    return
                if isinstance(answer, tuple) and answer[0] == "redirect":
                    self.send_response(302)
                    self.send_header("Location", answer[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if isinstance(answer, tuple) and answer[0] == "endless":
                    self.send_response(200)
                    if answer[1] is not None:
                        self.send_header("Content-Length", str(answer[1]))
                    self.end_headers()
                    block = bytes(1 << 16)
                    try:
                        while not server.release.is_set():
                            self.wfile.write(block)
                            server.sent += len(block)
                    except OSError:  # the client closed the connection
                        pass
                    self.close_connection = True
                    return
                if isinstance(answer, tuple) and answer[0] == "trickle":  # a byte at a time
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(answer[1])))
                    self.end_headers()
                    for i in range(len(answer[1])):
                        if server.release.wait(0.1):
                            return
                        self.wfile.write(answer[1][i:i + 1])
                        self.wfile.flush()
                    return
                if isinstance(answer, tuple) and answer[0] == "status":  # (_, code, body)
                    self.send_response(answer[1])
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer[2])))
                    self.end_headers()
                    self.wfile.write(answer[2])
                    return
                if isinstance(answer, tuple):  # ("short", body): the connection drops early
                    self.send_response(200)
                    self.send_header("Content-Length", str(2 * len(answer[1])))
                    self.end_headers()
                    self.wfile.write(answer[1])
                    self.close_connection = True
                    return
                if isinstance(answer, bytes):
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                else:
                    self.send_error(int(answer))

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # client gone after timeout
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
