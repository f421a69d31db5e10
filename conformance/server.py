"""A local HTTP/1.1 server that fails on purpose and logs every attempt.

The path of a request says what to do and which logical request (trial) it
belongs to: ``/<behaviour>/<trial>[/anything]``. Behaviours:

- ``fail-<what>``: every attempt fails with <what>.
- ``first-<what>``: the first attempt of the trial fails with <what>, the
  next ones succeed (200).
- ``upto<K>-<what>``: the first K attempts fail, then 200.

<what> is an HTTP status (``503``, ``429``, ...), optionally with a Retry-After
in seconds (``503-ra3``: ``Retry-After: 3`` and ``x-amz-retry-after: 3000``),
``reset`` (the connection is closed with a TCP RST after the request is read)
or ``hang`` (the request is read and never answered; the client's timeout
ends it).

Every attempt's arrival is logged with ``time.monotonic()`` when its request
line and headers have been read, so the gap between two attempts of a trial
is the client's delay plus its own overhead (sending, parsing, its timer).
"""

import asyncio
import re
import socket
import struct
import threading
import time
from collections import defaultdict

# The body of every error: AWS's query-protocol error document, so botocore
# reads an error code (a 429 is "Throttling", as AWS's throttling errors are);
# other clients ignore it.
AWS_CODES = {
    429: "Throttling",
    500: "InternalError",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "GatewayTimeout",
    400: "ValidationError",
    401: "InvalidClientTokenId",
    409: "Conflict",
}
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
OK_BODY = (
    b'<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
    b"<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/t</Arn>"
    b"<UserId>T</UserId><Account>123456789012</Account></GetCallerIdentityResult>"
    b"<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata>"
    b"</GetCallerIdentityResponse>"
)

PATH = re.compile(r"^/(fail|first|upto(\d+))-([a-z0-9-]+)/([^/?]+)")


def parse_what(what):
    """'503-ra3' -> ('status', 503, 3); 'reset' -> ('reset', None, None)."""
    if what in ("reset", "hang"):
        return what, None, None
    m = re.fullmatch(r"(\d{3})(?:-ra(\d+))?", what)
    if not m:
        raise ValueError(f"unknown failure {what!r}")
    return "status", int(m.group(1)), int(m.group(2)) if m.group(2) else None


class AttemptLog:
    """Arrival times of attempts, by trial, shared with the harness."""

    def __init__(self):
        self.lock = threading.Lock()
        self.arrivals = defaultdict(list)

    def add(self, trial, t):
        with self.lock:
            self.arrivals[trial].append(t)
            return len(self.arrivals[trial])

    def take(self):
        with self.lock:
            out = {k: list(v) for k, v in self.arrivals.items()}
            self.arrivals.clear()
            return out


def failure_for(path, attempt):
    """What attempt number `attempt` of the trial at `path` gets, or None for 200."""
    m = PATH.match(path)
    if not m:
        return ("status", 404, None)
    mode, k, what = m.group(1), m.group(2), m.group(3)
    if mode == "fail":
        fails = True
    elif mode == "first":
        fails = attempt == 1
    else:
        fails = attempt <= int(k)
    return parse_what(what) if fails else None


def response(status, retry_after=None, body=None):
    if body is None:
        code = AWS_CODES.get(status, "Error")
        body = (
            f"<ErrorResponse><Error><Type>Receiver</Type><Code>{code}</Code>"
            f"<Message>failing on purpose</Message></Error>"
            f"<RequestId>1</RequestId></ErrorResponse>"
        ).encode()
    head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", "Content-Type: text/xml"]
    if retry_after is not None:
        head.append(f"Retry-After: {retry_after}")
        head.append(f"x-amz-retry-after: {retry_after * 1000}")
    head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class FailingServer:
    """The server, on its own event loop in a thread; `port` once started."""

    def __init__(self, log):
        self.log = log
        self.port = None
        self._ready = threading.Event()
        self._loop = None
        self._hanging = []

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait()
        return self

    def _run(self):
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                now = time.monotonic()
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
                length = 0
                for line in lines[1:]:
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                if length:
                    await reader.readexactly(length)
                m = PATH.match(path)
                trial = m.group(4) if m else path
                attempt = self.log.add(trial, now)
                fate = failure_for(path, attempt)
                if fate is None:
                    writer.write(response(200, body=OK_BODY))
                    await writer.drain()
                    continue
                kind, status, ra = fate
                if kind == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    writer.transport.abort()
                    return
                if kind == "hang":
                    self._hanging.append(writer)
                    await asyncio.sleep(3600)
                    return
                writer.write(response(status, ra))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            if not writer.transport.is_closing():
                writer.close()
