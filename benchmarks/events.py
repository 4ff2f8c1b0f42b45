"""Live table events under load: append-to-delivery latency and the server's memory.

Run: python benchmarks/events.py [--rolls 50] [--scenarios one,many] [--rate 20]
                                 [--client c|epoll|raw|httpx] [--listen-workers 1]
                                 [--listen-processes 1]

Starts a private redis-server and two fairroll processes on it (granian, one worker
each): subscribers listen on the first, rolls are appended through the second, so every
delivery crosses processes through Redis (a blocking XREAD per table). Scenarios:

- ``one``: 1,000 subscribers on one table;
- ``many``: 100 tables of 10 subscribers each;
- ``others``: do 1,000 subscribers of one table slow rolls on *other* tables? One
  fairroll process takes FBC rolls from wrk over 1,000 other tables (``harness.py``'s
  load, ``--seconds`` a run, ``--connections``) while a thread rolls on the watched
  table at ``--rate``, through the same process; with the C subscribers connected to
  it (every delivery checked) and without them, alternated ``--rounds`` times, the
  order reversed each round. Printed: the other tables' req/s and p99, the serving
  process's CPU per roll on them while wrk ran (the watched table's rolls and their
  fan-out included: what the subscribers cost, however the shared machine schedules
  it), and the deliveries of each run (the watched rolls still paced after wrk's end
  are delivered, not counted in the CPU).

For each roll, the time from sending it to each subscriber receiving its event is
recorded (both ends on this machine's monotonic clock; each socket stamped just before
the read that returned its bytes). The subscribers are, by default, bare sockets on one
``epoll`` in a C process of their own (``events_client.c``, built with the machine's
``cc`` into ``benchmarks/out/``): a thousand sockets read by Python cost the reader
enough that its own lag showed in the figures. ``--client epoll`` is the same in Python
(``--listen-processes`` of them); ``--client raw`` puts them on asyncio streams and
``--client httpx`` on httpx streams in the rolling process, whose parsing there weighs
on the figures most. Printed are p50/p99/max over all
deliveries, every delivery counted (none may be missing), and the subscribing server's
RSS before subscribing and with every subscriber connected, with the cost per
subscriber. The baseline in the same run: the same rolls with no subscriber, timed to
their answer.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import os
import re
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from fairroll.redis_server import RedisServer, free_port
from harness import LUA, SCENARIOS, start, stop, wrk
from scale_out import cpu_seconds, settle
from soak import children

KEY = base64.b64encode(b"fairroll events benchmark key 01").decode()
BODY = '{"table":"%s","a":{"attribute":12},"b":{"attribute":9}}'


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def listen(
    client: httpx.AsyncClient,
    url: str,
    ready: asyncio.Event,
    seen: dict[int, list[float]],
    expected: int,
    counter: list[int],
    total: int,
) -> None:
    async with client.stream("GET", url) as answer:
        counter[0] += 1
        if counter[0] == total:
            ready.set()
        got = 0
        async for line in answer.aiter_lines():
            if line.startswith("id: "):
                seen.setdefault(int(line[4:]), []).append(time.monotonic())
                got += 1
                if got == expected:
                    return


ID_LINE = re.compile(rb"(?:^|\n)id: (\d+)\r?\n")


async def listen_raw(
    url: str,
    ready: asyncio.Event,
    seen: dict[int, list[float]],
    expected: int,
    counter: list[int],
    total: int,
) -> None:
    """``listen`` with a bare socket: one GET, then each read scanned for ``id:`` lines
    (an SSE stream's frames are whole lines in whole chunks), so the subscribers' own
    parsing costs this one process little next to the server it measures."""
    parsed = urlsplit(url)
    reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port)
    writer.write(
        f"GET {parsed.path} HTTP/1.1\r\nHost: {parsed.netloc}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    counter[0] += 1
    if counter[0] == total:
        ready.set()
    got, tail = 0, b""
    try:
        while got < expected:
            data = await reader.read(65536)
            if not data:
                return
            at = time.monotonic()
            chunk = tail + data
            for match in ID_LINE.finditer(chunk):
                seen.setdefault(int(match[1]), []).append(at)
                got += 1
            tail = chunk[-64:]
            if ID_LINE.search(tail):  # counted already: do not count it twice
                tail = tail[tail.rfind(b"\n") :]
    finally:
        writer.close()


def start_epoll_listeners(
    client: str, listen_url: str, expected: int, paths: list[str], processes: int
) -> list[tuple[multiprocessing.Process, Connection, list[str]]]:
    """The Python epoll subscribers (``--client epoll``), connected, in ``processes``
    processes sharing the paths; none for the other clients."""
    if client != "epoll":
        return []
    parsed = urlsplit(listen_url)
    listeners = []
    for k in range(processes):
        share = paths[k::processes]
        mine, theirs = multiprocessing.Pipe()
        listener = multiprocessing.Process(
            target=listen_epoll,
            args=(share, parsed.hostname, parsed.port, expected, theirs),
            daemon=True,
        )
        listener.start()
        listeners.append((listener, mine, share))
    for _, mine, _ in listeners:
        if not mine.poll(120):
            raise SystemExit("the subscribers did not connect")
        mine.recv()
    return listeners


def start_c_client(
    client: str, listen_url: str, expected: int, paths: list[str]
) -> subprocess.Popen[str] | None:
    """The C subscribers (``--client c``), connected; None for the other clients."""
    if client != "c":
        return None
    parsed = urlsplit(listen_url)
    command = [str(c_client()), str(parsed.hostname), str(parsed.port), str(expected), *paths]
    native = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    if native.stdout is None or native.stdout.readline().strip() != "connected":
        raise SystemExit("the subscribers did not connect")
    return native


def c_client() -> Path:
    """``events_client.c`` built with the machine's C compiler (into benchmarks/out/)."""
    source = Path(__file__).with_name("events_client.c")
    binary = Path(__file__).with_name("out") / "events_client"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        binary.parent.mkdir(exist_ok=True)
        subprocess.run(["cc", "-O2", "-o", str(binary), str(source)], check=True)
    return binary


def listen_epoll(paths: list[str], host: str, port: int, expected: int, conn: Connection) -> None:
    """The subscribers in a process of their own, on one thread with ``epoll``: one GET
    per path, then each read scanned for ``id:`` lines, stamped on the machine's monotonic
    clock (which the rolling process shares). A read costs a few microseconds here, where
    1,000 asyncio streams in the rolling process cost it most of a core, so the figures
    are the server's delivery, not the subscribers' parsing. A socket's bytes are
    stamped just before they are read. Sends back, per socket, its seqs and their
    arrival times."""
    poller = select.epoll()
    sockets: dict[int, socket.socket] = {}
    for path in paths:
        sock = socket.create_connection((host, port))
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        sock.setblocking(False)
        sockets[sock.fileno()] = sock
        poller.register(sock.fileno(), select.EPOLLIN)
    order = {fd: i for i, fd in enumerate(sockets)}
    seqs = [array("q") for _ in paths]
    times = [array("d") for _ in paths]
    tails = dict.fromkeys(sockets, b"")
    conn.send("connected")
    open_ = len(sockets)
    deadline = time.monotonic() + 300
    while open_ and time.monotonic() < deadline:
        for fd, _ in poller.poll(5.0):
            # Stamped just before the read: the bytes it returns were there by then (a
            # stamp taken when poll returned would be earlier than bytes that arrive
            # while the batch is read), so a latency here is never less than the real one.
            at = time.monotonic()
            data = sockets[fd].recv(65536)
            i = order[fd]
            if data:
                chunk = tails[fd] + data
                for match in ID_LINE.finditer(chunk):
                    seqs[i].append(int(match[1]))
                    times[i].append(at)
                tail = chunk[-64:]
                if ID_LINE.search(tail):  # counted already: do not count it twice
                    tail = tail[tail.rfind(b"\n") :]
                tails[fd] = tail
            if not data or len(seqs[i]) >= expected:
                poller.unregister(fd)
                sockets[fd].close()
                open_ -= 1
    conn.send([(seq.tobytes(), at.tobytes()) for seq, at in zip(seqs, times, strict=True)])


async def scenario(
    name: str,
    tables: list[str],
    per_table: int,
    rolls: int,
    listen_url: str,
    roll_url: str,
    worker: int,
    *,
    client: str = "epoll",
    rate: float = 0.0,
    listen_processes: int = 1,
) -> None:
    total = len(tables) * per_table
    limits = httpx.Limits(max_connections=total + 10, max_keepalive_connections=total + 10)
    before = rss_kib(worker)
    timeout = httpx.Timeout(120, connect=30)
    async with (
        httpx.AsyncClient(limits=limits, timeout=timeout) as streams,
        httpx.AsyncClient(timeout=30) as roller,
    ):
        seen: dict[str, dict[int, list[float]]] = {t: {} for t in tables}
        ready = asyncio.Event()
        counter = [0]
        per_roll = max(1, rolls // len(tables))
        paths = [f"/v1/tables/{t}/events" for t in tables for _ in range(per_table)]
        native = await asyncio.to_thread(start_c_client, client, listen_url, per_roll, paths)
        if native is not None:
            ready.set()
        listeners = start_epoll_listeners(client, listen_url, per_roll, paths, listen_processes)
        if listeners:
            ready.set()
        tasks = (
            []
            if client in ("epoll", "c")
            else [
                asyncio.ensure_future(
                    listen_raw(
                        f"{listen_url}/v1/tables/{t}/events",
                        ready,
                        seen[t],
                        per_roll,
                        counter,
                        total,
                    )
                    if client == "raw"
                    else listen(
                        streams,
                        f"{listen_url}/v1/tables/{t}/events",
                        ready,
                        seen[t],
                        per_roll,
                        counter,
                        total,
                    )
                )
                for t in tables
                for _ in range(per_table)
            ]
        )
        await asyncio.wait_for(ready.wait(), 120)
        await asyncio.sleep(1.0)
        connected = rss_kib(worker)
        sent: dict[tuple[str, int], float] = {}
        pace = 1.0 / rate if rate else 0.0
        next_at = time.monotonic()
        for _ in range(per_roll):
            for table in tables:
                next_at += pace
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                at = time.monotonic()
                answer = await roller.post(
                    f"{roll_url}/v1/tft/contests",
                    content=BODY % table,
                    headers={"content-type": "application/json"},
                )
                sent[table, answer.json()["receipt"]["seq"]] = at
        await asyncio.wait_for(asyncio.gather(*tasks), 120)
        if native is not None:
            out, _ = await asyncio.to_thread(native.communicate)
            for line in out.splitlines():
                index, seq, at = line.split()
                seen[paths[int(index)].split("/")[3]].setdefault(int(seq), []).append(float(at))
        for listener, mine, share in listeners:
            got = await asyncio.to_thread(mine.recv)
            listener.join(10)
            for path, (seq_bytes, time_bytes) in zip(share, got, strict=True):
                table = path.split("/")[3]
                arrived = array("d")
                arrived.frombytes(time_bytes)
                numbered = array("q")
                numbered.frombytes(seq_bytes)
                for seq, at in zip(numbered, arrived, strict=True):
                    seen[table].setdefault(seq, []).append(at)
    report(name, len(tables), per_table, sent, seen, (before, connected, total))


def report(
    name: str,
    tables: int,
    per_table: int,
    sent: dict[tuple[str, int], float],
    seen: dict[str, dict[int, list[float]]],
    memory: tuple[int, int, int],
) -> None:
    """The scenario's line: deliveries, their p50/p99/max, the memory; then per roll."""
    before, connected, total = memory
    latencies = [
        (got - sent[table, seq]) * 1000
        for table, by_seq in seen.items()
        for seq, times in by_seq.items()
        for got in times
    ]
    expected = len(sent) * per_table
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    print(
        f"{name:<5} {tables:>6} {per_table:>6} {len(sent):>6} {len(latencies):>9}/"
        f"{expected:<9} {p(0.5):>7.1f} {p(0.99):>7.1f} {latencies[-1]:>7.1f} "
        f"{before / 1024:>8.1f} {connected / 1024:>8.1f} {(connected - before) / total:>8.1f}"
    )
    # Per roll: its first and its last delivery. A last delivery late in most rolls is
    # the fan-out's own cost; late in a few only, a pause (the collector, the scheduler).
    firsts, lasts = [], []
    for (table, seq), at in sent.items():
        times = seen[table].get(seq, [])
        if times:
            firsts.append((min(times) - at) * 1000)
            lasts.append((max(times) - at) * 1000)
    firsts.sort()
    lasts.sort()
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
    print(
        f"      per roll: first delivery p50 {q(firsts, 0.5):.1f} ms; last delivery "
        f"p50 {q(lasts, 0.5):.1f} / p90 {q(lasts, 0.9):.1f} / max {lasts[-1]:.1f} ms"
    )


async def baseline(roll_url: str, rolls: int) -> float:
    async with httpx.AsyncClient(timeout=30) as roller:
        times = []
        for _ in range(rolls):
            at = time.monotonic()
            await roller.post(
                f"{roll_url}/v1/tft/contests",
                content=BODY % "baseline",
                headers={"content-type": "application/json"},
            )
            times.append((time.monotonic() - at) * 1000)
    return statistics.median(times)


def pace(url: str, rolls: int, rate: float, failed: list[int]) -> None:
    """``rolls`` rolls on the watched table, ``rate`` a second, one at a time; each roll
    not answered 200 counted in ``failed``."""
    with httpx.Client(base_url=url, timeout=30) as roller:
        next_at = time.monotonic()
        for _ in range(rolls):
            next_at += 1.0 / rate
            time.sleep(max(0.0, next_at - time.monotonic()))
            answer = roller.post(
                "/v1/tft/contests",
                content=BODY % "watched",
                headers={"content-type": "application/json"},
            )
            failed[0] += answer.status_code != 200


def others(url: str, watched: str, pid: int, args: argparse.Namespace, tmp: Path) -> None:
    """The ``others`` scenario: rolls on other tables at ``url``, with and without the
    subscribers of one table at ``watched`` (the same server, or with ``--split`` the
    second one), alternated."""
    path, body = SCENARIOS["fbc"]
    script = tmp / "others.lua"
    script.write_text(LUA % {"tables": 1000, "body": body})
    wrk(url + path, script, 2, args.connections)  # warm-up: imports, caches, connections
    rolls = int(args.rate * args.seconds)
    paths = ["/v1/tables/watched/events"] * args.subscribers
    print(
        f"FBC rolls over 1,000 other tables (wrk -t1 -c{args.connections}, {args.seconds} s "
        f"a run) while the watched table takes {args.rate:g} rolls/s"
    )
    print(
        f"{'subscribers':>11} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'failed':>6} "
        f"{'CPU µs/roll':>11}  watched: failed, deliveries"
    )
    pids = settle(pid, 1)
    rows: dict[int, list[tuple[float, float]]] = {0: [], args.subscribers: []}
    for number in range(args.rounds):
        order = [0, args.subscribers] if number % 2 == 0 else [args.subscribers, 0]
        for subscribers in order:
            native = (
                start_c_client("c", watched, rolls, paths[:subscribers]) if subscribers else None
            )
            if native is not None:
                time.sleep(1.0)
            failed = [0]
            roller = threading.Thread(target=pace, args=(watched, rolls, args.rate, failed))
            cpu = cpu_seconds(pids)
            roller.start()
            rps, p50, p99, _, non2xx, errors = wrk(
                url + path, script, args.seconds, args.connections
            )
            cpu = cpu_seconds(pids) - cpu  # wrk's window only
            roller.join()
            delivered = "-"
            if native is not None:
                out, _ = native.communicate(timeout=120)
                delivered = f"{len(out.splitlines()):,}/{rolls * subscribers:,}"
            rows[subscribers].append((rps, p99))
            print(
                f"{subscribers:>11,} {rps:>8,.0f} {p50:>7.2f} {p99:>7.2f} "
                f"{int(non2xx + errors):>6} {cpu / (rps * args.seconds) * 1e6:>11,.0f}  "
                f"{failed[0]}, {delivered}",
                flush=True,
            )
    for subscribers, runs in rows.items():
        mean = sum(r for r, _ in runs) / len(runs)
        p99s = ", ".join(f"{p:.1f}" for _, p in runs)
        print(f"{subscribers:>11,} subscribers: mean {mean:,.0f} req/s; p99 ms {p99s}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rolls", type=int, default=50)
    parser.add_argument("--scenarios", default="one,many")
    parser.add_argument("--subscribers", type=int, default=1000, help="of the one table")
    parser.add_argument(
        "--rate",
        type=float,
        default=20.0,
        help="rolls a second, paced (0: as fast as they are answered)",
    )
    parser.add_argument(
        "--listen-processes",
        type=int,
        default=1,
        help="processes the epoll subscribers are shared between",
    )
    parser.add_argument(
        "--listen-workers",
        type=int,
        default=1,
        help="worker processes of the server the subscribers listen on",
    )
    parser.add_argument(
        "--client",
        default="c",
        choices=["c", "epoll", "raw", "httpx"],
        help="the subscribers: bare sockets on epoll in a C process of their own "
        "(events_client.c), or in a Python process (epoll), or asyncio sockets or httpx "
        "streams in the rolling process",
    )
    parser.add_argument("--seconds", type=int, default=5, help="a run of wrk (others)")
    parser.add_argument("--connections", type=int, default=32, help="wrk's (others)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations (others)")
    parser.add_argument(
        "--split",
        action="store_true",
        help="(others) the subscribers and the watched table's rolls on a second process",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        redis = RedisServer(Path(tmp) / "redis", port=free_port()).start()
        env = {
            **os.environ,
            "REDIS_URL": redis.url,
            "FAIRROLL_SIGNING_KEY": KEY,
            "FAIRROLL_MAX_SUBSCRIBERS": "2000",
        }
        servers = []
        urls = []
        for name in ("listen", "roll"):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            command = [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)]
            if name == "listen":
                command += ["--workers", str(args.listen_workers)]
            servers.append(start(command, env, Path(tmp) / f"{name}.log", f"{url}/livez"))
            urls.append(url)
        try:
            if args.scenarios == "others":
                watched = urls[1] if args.split else urls[0]
                others(urls[0], watched, servers[0].pid, args, Path(tmp))
                return
            worker = max(children(servers[0].pid), default=servers[0].pid)
            answer = asyncio.run(baseline(urls[1], args.rolls))
            print(f"baseline: a roll answered in {answer:.1f} ms (median, no subscriber)")
            paced = f"{args.rate:g} rolls/s" if args.rate else "as fast as answered"
            print(f"rolls paced at {paced}; subscribers: {args.client}")
            print(
                "scen. tables per_t  rolls deliveries/expected   p50 ms  p99 ms  max ms "
                "RSS0 MiB RSS MiB  KiB/sub"
            )
            if "one" in args.scenarios:
                one = ["one"]
                asyncio.run(
                    scenario(
                        "one",
                        one,
                        args.subscribers,
                        args.rolls,
                        urls[0],
                        urls[1],
                        worker,
                        client=args.client,
                        listen_processes=args.listen_processes,
                        rate=args.rate,
                    )
                )
            if "many" in args.scenarios:
                tables = [f"t{i:03d}" for i in range(100)]
                asyncio.run(
                    scenario(
                        "many",
                        tables,
                        10,
                        max(args.rolls, 100),
                        urls[0],
                        urls[1],
                        worker,
                        client=args.client,
                        listen_processes=args.listen_processes,
                        rate=args.rate,
                    )
                )
        finally:
            for server in servers:
                stop(server)
            redis.stop()
            log = (Path(tmp) / "listen.log").read_text().splitlines()
            errors = [line for line in log if "ERROR" in line or "Exception" in line]
            if errors:  # every delivery must arrive: say why one did not
                print("listening server's errors:", *errors[:5], sep="\n  ")


if __name__ == "__main__":
    main()
