"""How `strikebot run` serves its one web server so that hostile clients cannot take it down.

    limit = raise_file_limit()                          # soft -> hard, or say why not
    guard = ConnectionGuard(config.server, clients, metrics, budget(limit, config.server))
    app.middlewares.append(request_limits(config.server, metrics))
    runner = web.AppRunner(app, **runner_options(config.server))
    listener = await listen(runner, host, port, guard,  # instead of a TCPSite
                            batch=accept_batch(limit, guard.max_connections))

What it withstands (docs/deploy.md says the same to operators):

- Open connections are capped in all, below the process's file limit (a quarter of it, and
  at least 64, stay for the database, the platforms and the logs), and per client (an IPv4
  address, an IPv6 /64; trusted proxies are exempt). When the table is full, a newcomer
  whose client holds fewer connections than the biggest holder gets the place of that
  holder's oldest idle connection (one that has sent no request); others are refused. So
  a family's phone is served while thousands of idle connections from a few hundred
  addresses hold the server, and the refused do not drop one another in a loop.
- A new connection has `header_timeout` seconds to send its first request's headers (idle
  or trickling); a request has `body_timeout` seconds to send its body; an idle keep-alive
  connection is closed after `keepalive_timeout` (which also bounds the headers of each
  later request on it), and one connection serves at most `keepalive_requests` requests.
- Every refusal is counted in `strikebot_http_refused_total{reason}`; repeated ones are
  logged once a minute with their counts, never a line, let alone a traceback, per
  connection. asyncio's and aiohttp's per-connection errors ("Task exception was never
  retrieved", connection resets) are collapsed the same way (`quiet_connection_noise`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from typing import Any
from weakref import WeakKeyDictionary

from aiohttp import web

from bot.config import ServerSection
from bot.metrics import Metrics
from bot.network import Clients, connection_key

log = logging.getLogger("strikebot.server")

REPORT_EVERY = 60.0  # seconds between summaries of what was refused
MIN_SPARE_FILES = 64  # file descriptors kept for everything but client connections
BACKLOG = 4096  # connections the kernel queues before the server accepts them (its cap: somaxconn)
LINGER = 2.0  # seconds the rest of a refused body is read (drained) before closing

_REFUSED = {
    "connections_full": b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n",
    "client_full": b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\n",
    "header_timeout": b"HTTP/1.1 408 Request Timeout\r\n",
}
_CLOSE = b"Connection: close\r\nContent-Length: 0\r\n\r\n"


def raise_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; return the soft
    limit now in force, saying once in the log what it is and what it allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1_048_576)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            log.info("raised the open-file limit from %d to %d", soft, wanted)
            soft = wanted
        except (ValueError, OSError) as exc:
            log.warning(
                "could not raise the open-file limit above %d (%s); raise it for the "
                "service (LimitNOFILE= in systemd, --ulimit nofile= in Docker)",
                soft,
                exc,
            )
    return int(soft if soft != resource.RLIM_INFINITY else 1_048_576)


def budget(file_limit: int, section: ServerSection) -> int:
    """How many client connections may be open at once: `max_connections`, or the file
    limit less a quarter (at least `MIN_SPARE_FILES`); never more than the limit allows."""
    spare = max(MIN_SPARE_FILES, file_limit // 4)
    allowed = max(file_limit - spare, 1)
    return min(section.max_connections or allowed, allowed)


class ConnectionGuard:
    """Admits or refuses each connection (`Listener` asks it before anything is built for
    one), times its first request's headers, and hands the admitted ones to aiohttp's own
    protocol."""

    def __init__(
        self,
        section: ServerSection,
        clients: Clients,
        metrics: Metrics,
        max_connections: int,
    ) -> None:
        self.section = section
        self.clients = clients
        self.metrics = metrics
        self.max_connections = max_connections
        self.per_client = section.max_connections_per_client
        self.factory: Callable[[], asyncio.Protocol] | None = None
        self.open = 0
        self.by_client: Counter[str] = Counter()
        # Each client's connections that have not sent a whole request yet, oldest first.
        self.waiting: dict[str, OrderedDict[_Guarded, None]] = {}
        self.refused: Counter[str] = Counter()

    def refuse(self, reason: str) -> None:
        self.refused[reason] += 1
        self.metrics.http_refused.inc(reason)

    def admit(self, conn: _Guarded) -> str | None:
        """None when `conn` may stay, else the reason it may not."""
        exempt = self.clients.is_trusted(conn.peer)
        if not exempt and self.by_client[conn.client] >= self.per_client:
            return "client_full"
        if self.open >= self.max_connections and not self._evict_for(conn.client):
            return "connections_full"
        self.open += 1
        self.by_client[conn.client] += 1
        self.waiting.setdefault(conn.client, OrderedDict())[conn] = None
        self.metrics.http_connections.set(self.open)
        return None

    def _evict_for(self, client: str) -> bool:
        """Make room for a connection of `client` in a full table: drop the oldest idle
        connection (no request yet) of a client holding more connections than `client`
        would with this one, the biggest holder first; False when there is none. So a
        client holding few is let in, one holding its share already is refused, and those
        refused do not drop one another in a loop."""
        mine = self.by_client[client] + 1
        for holder, count in self.by_client.most_common():
            if count <= mine:
                return False
            idle = self.waiting.get(holder)
            if idle:
                victim = next(iter(idle))
                victim.cut("evicted_idle", None)
                return True
        return False

    def forget_waiting(self, conn: _Guarded) -> None:
        """`conn` sent its request (or is gone): it is no longer one to drop for room."""
        idle = self.waiting.get(conn.client)
        if idle is not None:
            idle.pop(conn, None)
            if not idle:
                del self.waiting[conn.client]

    def release(self, conn: _Guarded) -> None:
        self.open -= 1
        self.by_client[conn.client] -= 1
        if self.by_client[conn.client] <= 0:
            del self.by_client[conn.client]
        self.forget_waiting(conn)
        self.metrics.http_connections.set(self.open)

    def report(self) -> None:
        """Log what was refused since the last report, in one line (nothing if nothing)."""
        if not self.refused:
            return
        counts = ", ".join(f"{reason} {n}" for reason, n in self.refused.most_common())
        log.warning(
            "refused or cut %d connections in the last %.0f s (%s); %d open of %d",
            sum(self.refused.values()),
            REPORT_EVERY,
            counts,
            self.open,
            self.max_connections,
        )
        self.refused.clear()


class _Guarded(asyncio.Protocol):
    """One connection: aiohttp's protocol inside, the guard's rules around it."""

    def __init__(self, guard: ConnectionGuard, peer: str) -> None:
        self.guard = guard
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.peer = peer
        self.client = connection_key(peer)
        self.timer: asyncio.TimerHandle | None = None
        self.tail = b""
        self.admitted = False  # counted by the guard (from `admit` to `connection_lost`)
        self.doomed = False  # dropped to make room before its transport was ready

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self.doomed:
            transport.abort()
            return
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(self.guard.section.header_timeout, self._headers_late)
        assert self.guard.factory is not None
        self.inner = self.guard.factory()
        self.inner.connection_made(transport)

    def _headers_late(self) -> None:
        self.timer = None
        self.cut("header_timeout", _REFUSED["header_timeout"])

    def cut(self, reason: str, answer: bytes | None) -> None:
        """Refuse or drop this connection for `reason`, answering `answer` first if given."""
        self.guard.refuse(reason)
        self.guard.forget_waiting(self)
        transport = self.transport
        if transport is None:
            self.doomed = True
            return
        if transport.is_closing():
            return
        if answer is not None:
            with contextlib.suppress(Exception):
                transport.write(answer + _CLOSE)
            transport.close()
        else:
            transport.abort()

    def data_received(self, data: bytes) -> None:
        if self.timer is not None:
            seen = self.tail + data
            if b"\r\n\r\n" in seen or b"\n\n" in seen:
                self.timer.cancel()
                self.timer = None
                self.guard.forget_waiting(self)
            else:
                self.tail = seen[-3:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.admitted:
            self.admitted = False
            self.guard.release(self)
        if self.inner is not None:
            self.inner.connection_lost(exc)


def runner_options(section: ServerSection) -> dict[str, Any]:
    """What aiohttp's server is built with: the keep-alive timeout, and how long it waits
    for the rest of a body it refused before closing (so the client reads the refusal)."""
    return {"keepalive_timeout": section.keepalive_timeout, "lingering_time": LINGER}


def request_limits(section: ServerSection, metrics: Metrics) -> Any:
    """The middleware that reads each request's body within `body_timeout` (before any
    handler, which then finds it read) and closes a connection after `keepalive_requests`
    requests. Runs inside the web plugin's middleware, which words its refusals."""
    served: WeakKeyDictionary[object, int] = WeakKeyDictionary()

    @web.middleware
    async def limits(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        transport = request.transport  # one per connection
        count = 1
        if transport is not None:
            count = served.get(transport, 0) + 1
            served[transport] = count
        if request.body_exists:
            try:
                async with asyncio.timeout(section.body_timeout):
                    if request.content_type in ("multipart/form-data",):
                        await request.post()
                    else:
                        await request.read()
            except TimeoutError:
                metrics.http_refused.inc("body_timeout")
                late = web.Response(
                    status=408,
                    text=f"The request's body did not arrive within {section.body_timeout:g} s.",
                )
                late.force_close()  # and never wait for the rest of it
                return late
        response = await handler(request)
        if count >= section.keepalive_requests:
            metrics.http_refused.inc("keepalive_requests")
            response.force_close()
        return response

    return limits


def accept_batch(file_limit: int, max_connections: int) -> int:
    """How many connections the loop accepts at once: asyncio takes up to this many before
    any of them is refused and closed (and as many dropped to make room close a moment
    later), so twice that must fit in the files left spare, else accept fails with EMFILE
    and asyncio stops accepting for a whole second."""
    return max(8, min(BACKLOG, (file_limit - max_connections) // 4))


class Listener:
    """The listening sockets, with an accept loop of our own: a connection is admitted or
    refused (a one-line answer, then closed) right after `accept()`, before any transport or
    protocol is built for it, so that refusing thousands a second costs little; the
    admitted ones become asyncio transports (`loop.connect_accepted_socket`). At most
    `batch` are accepted per turn of the loop (`accept_batch`); the kernel queues up to
    `BACKLOG` meanwhile."""

    def __init__(self, sockets: list[socket.socket], guard: ConnectionGuard, batch: int) -> None:
        self.sockets = sockets
        self.guard = guard
        self.batch = batch
        self._loop = asyncio.get_running_loop()
        self._attaching: set[asyncio.Task[None]] = set()
        self._paused = False
        for sock in sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    @property
    def port(self) -> int:
        return int(self.sockets[0].getsockname()[1])

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(self.batch):
            try:
                conn, address = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of files (EMFILE) or memory: pause a moment
                self.guard.refuse("accept_failed")
                log.warning("accepting a connection failed (%s); pausing 0.1 s", exc)
                self._pause(sock)
                return
            conn.setblocking(False)
            peer = str(address[0]) if isinstance(address, tuple) and address else ""
            proto = _Guarded(self.guard, peer)
            why = self.guard.admit(proto)
            if why is not None:
                self.guard.refuse(why)
                with contextlib.suppress(OSError):
                    conn.send(_REFUSED[why] + _CLOSE)
                conn.close()
                continue
            proto.admitted = True
            task = self._loop.create_task(self._attach(conn, proto))
            self._attaching.add(task)
            task.add_done_callback(self._attaching.discard)

    async def _attach(self, conn: socket.socket, proto: _Guarded) -> None:
        try:
            await self._loop.connect_accepted_socket(lambda: proto, conn)
        except OSError:
            conn.close()
            if proto.admitted:
                proto.admitted = False
                self.guard.release(proto)

    def _pause(self, sock: socket.socket) -> None:
        self._loop.remove_reader(sock.fileno())

        def resume() -> None:
            if sock.fileno() != -1:
                self._loop.add_reader(sock.fileno(), self._accept, sock)

        self._loop.call_later(0.1, resume)

    def close(self) -> None:
        """Stop accepting; the runner's cleanup closes the connections that are open."""
        for sock in self.sockets:
            if sock.fileno() != -1:
                self._loop.remove_reader(sock.fileno())
                sock.close()
        for task in list(self._attaching):
            task.cancel()


async def listen(
    runner: web.AppRunner, host: str, port: int, guard: ConnectionGuard, *, batch: int = 128
) -> Listener:
    """Listen on host:port (every address it resolves to) with `guard` in front of the
    runner's aiohttp server."""
    server = runner.server
    assert server is not None, "call runner.setup() first"
    guard.factory = server
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((address[0], port, *address[2:]))
            sock.listen(BACKLOG)
            sock.setblocking(False)
            if not port:  # one free port, the same for every address
                port = sock.getsockname()[1]
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return Listener(sockets, guard, batch)


# -- the noise of hostile clients ---------------------------------------------------------

# What one connection going wrong looks like: counted, not logged one by one.
_CONNECTION_ERRORS = (ConnectionError, TimeoutError, OSError)


class Repeats(logging.Filter):
    """Lets the first record of each kind (logger and message template) through per
    `interval`, without its traceback (the exception's type and text are kept); the others
    are counted and said in the next one let through ("and 3,699 more like it")."""

    def __init__(self, interval: float = REPORT_EVERY, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.interval = interval
        self.clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._skipped: Counter[tuple[str, str]] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg)[:200])
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            self._skipped[key] += 1
            return False
        self._last[key] = now
        if len(self._last) > 1000:  # many kinds: forget the oldest
            for old in list(self._last)[:500]:
                del self._last[old]
        skipped = self._skipped.pop(key, 0)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        if skipped:
            record.msg = (
                f"{record.getMessage()} (and {skipped} more like it in the last "
                f"{self.interval:.0f} s)"
            )
            record.args = None
        return True


def _exception_handler(
    repeats: Repeats,
) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    noisy = logging.getLogger("strikebot.server.connections")

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message", ""))
        if isinstance(exc, _CONNECTION_ERRORS) or "never retrieved" in message:
            record = noisy.makeRecord(
                noisy.name,
                logging.WARNING,
                __file__,
                0,
                "a client's connection failed: %s",
                (message or type(exc).__name__,),
                (type(exc), exc, None) if isinstance(exc, BaseException) else None,
            )
            if repeats.filter(record):
                noisy.handle(record)
            return
        loop.default_exception_handler(context)

    return handle


@contextlib.contextmanager
def quiet_connection_noise() -> Iterator[Repeats]:
    """While serving: asyncio's per-connection errors and aiohttp's per-request error lines
    are logged once a minute per kind, with a count and without tracebacks."""
    repeats = Repeats()
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(_exception_handler(repeats))
    loggers = [logging.getLogger(name) for name in ("asyncio", "aiohttp.server", "aiohttp.web")]
    for logger in loggers:
        logger.addFilter(repeats)
    try:
        yield repeats
    finally:
        for logger in loggers:
            logger.removeFilter(repeats)
        loop.set_exception_handler(previous)


async def report_refusals(guard: ConnectionGuard, stop: asyncio.Event) -> None:
    """Every `REPORT_EVERY` seconds, one line about what was refused, until `stop`."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), REPORT_EVERY)
        guard.report()
