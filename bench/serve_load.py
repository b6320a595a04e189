"""A bounded load test of `vox serve` (a benchmark, not a test): many concurrent streaming clients on
loopback, then a soak, then clients that disconnect mid-stream and duplex sessions that cancel.

    python bench/serve_load.py                       # starts `vox serve` (the built-in default model, CPU)
    python bench/serve_load.py --clients 64 --load-s 60 --soak-s 180 --max-sessions 16 --json out.json
    python bench/serve_load.py --url http://127.0.0.1:8080 --pid 1234   # a server already running

What it measures:
  * time to first audio (TTFA): request sent -> first bytes of audio received, p50 / p95 / max, over
    the requests that were admitted (the rest got 429: counted, and the client waits Retry-After);
    first for one client alone, then for all of them;
  * throughput: seconds of audio received per second of wall time, all clients together;
  * errors: anything but 200 and 429 (there must be none), and 429s (expected once the clients
    outnumber --max-sessions);
  * the server's RSS (/proc/PID/status VmRSS) after warm-up, during and after the soak (it must stay
    flat: no growth per request);
  * disconnects: clients that read the first chunk of a long text and close the connection; the
    server must count each as cancelled, compute at most about one chunk more, and free the slot;
  * cancels: duplex WebSocket sessions that send "cancel" after their first audio; the time to the
    "done" event.
Every client streams response_format pcm (24 kHz s16le) and reads it to the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEXTS = [
    "Hello there.",
    "The weather is calm today, with a light wind from the west.",
    "Please hold the line. Your call is important to us.",
    "Numbers like 42 and 3.5 are read out in full.",
    "A short sentence. Then a second one, a little longer than the first.",
    "Streaming speech starts before the whole text is done.",
]
LONG = " ".join(f"This is sentence number {i} of a long text that nobody waits to hear." for i in range(1, 13))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Stats:
    def __init__(self) -> None:
        self.ttfa: list[float] = []
        self.audio_s = 0.0
        self.ok = 0
        self.busy = 0
        self.errors: list[str] = []

    def summary(self, wall: float) -> dict:
        return {"requests_ok": self.ok, "responses_429": self.busy, "errors": len(self.errors),
                "error_samples": self.errors[:5], "ttfa_p50_s": round(pct(self.ttfa, 0.5), 3),
                "ttfa_p95_s": round(pct(self.ttfa, 0.95), 3), "ttfa_max_s": round(max(self.ttfa, default=float("nan")), 3),
                "audio_s": round(self.audio_s, 1), "wall_s": round(wall, 1),
                "throughput_audio_s_per_s": round(self.audio_s / wall, 3) if wall else None}


async def one_request(http, stats: Stats, text: str) -> float:
    """One streamed request; returns the seconds to wait before the next (Retry-After on a 429)."""
    t0 = time.perf_counter()
    body = {"input": text, "voice": "default", "response_format": "pcm", "seed": 1}
    try:
        async with http.stream("POST", "/v1/audio/speech", json=body) as r:
            if r.status_code == 429:
                stats.busy += 1
                await r.aread()
                return float(r.headers.get("retry-after", "1"))
            if r.status_code != 200:
                stats.errors.append(f"{r.status_code}: {(await r.aread())[:200]!r}")
                return 1.0
            first, n = None, 0
            async for b in r.aiter_raw():
                if first is None and b:
                    first = time.perf_counter() - t0
                n += len(b)
            stats.ok += 1
            stats.ttfa.append(first if first is not None else float("nan"))
            stats.audio_s += n / 2 / 24000
            return 0.0
    except Exception as e:  # a dropped connection, a timeout: an error of the server's
        stats.errors.append(f"{type(e).__name__}: {e}")
        return 1.0


async def client_loop(http, stats: Stats, until: float, rng: random.Random) -> None:
    while time.monotonic() < until:
        wait = await one_request(http, stats, rng.choice(TEXTS))
        if wait:
            await asyncio.sleep(min(wait, max(0.0, until - time.monotonic())))


async def load(url: str, clients: int, seconds: float, pid: int | None, rss: list) -> dict:
    import httpx

    stats = Stats()
    limits = httpx.Limits(max_connections=clients + 8, max_keepalive_connections=clients + 8)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as http:
        until = time.monotonic() + seconds
        t0 = time.perf_counter()

        async def sample():
            while time.monotonic() < until:
                if pid:
                    rss.append((round(time.perf_counter() - t0, 1), round(rss_mib(pid), 1)))
                await asyncio.sleep(5)

        tasks = [client_loop(http, stats, until, random.Random(i)) for i in range(clients)]
        await asyncio.gather(sample(), *tasks)
        wall = time.perf_counter() - t0
    return stats.summary(wall)


async def metrics(url: str) -> dict[str, float]:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        text = (await http.get("/metrics")).text
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.rpartition(" ")
            out[k] = float(v)
    return out


async def wait_idle(url: str, timeout: float = 60) -> float:
    import httpx

    t0 = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        while time.perf_counter() - t0 < timeout:
            if (await http.get("/health")).json()["active_sessions"] == 0:
                return time.perf_counter() - t0
            await asyncio.sleep(0.05)
    return float("nan")


async def disconnects(url: str, n: int) -> dict:
    """n clients at once: read the first chunk of a 12-sentence text, then close."""
    import httpx

    await wait_idle(url)
    m0 = await metrics(url)
    dropped = 0

    async def one(i):
        nonlocal dropped
        async with httpx.AsyncClient(base_url=url, timeout=300) as http:
            async with http.stream("POST", "/v1/audio/speech", json={"input": LONG, "response_format": "pcm",
                                                                      "seed": i}) as r:
                if r.status_code != 200:
                    return
                async for b in r.aiter_raw():
                    if b:
                        dropped += 1
                        return
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    idle = await wait_idle(url)
    m1 = await metrics(url)
    key = 'vox_server_cancelled_total{reason="disconnect"}'
    return {"clients": n, "dropped_after_first_chunk": dropped,
            "cancelled_by_server": int(m1.get(key, 0) - m0.get(key, 0)),
            "chunks_computed": int(m1["vox_server_chunks_total"] - m0["vox_server_chunks_total"]),
            "chunks_after_cancel": int(m1["vox_server_chunks_after_cancel_total"]
                                       - m0["vox_server_chunks_after_cancel_total"]),
            "chunks_if_not_cancelled": n * 12, "slots_free_after_s": round(time.perf_counter() - t0, 2),
            "idle_wait_s": round(idle, 2)}


async def cancels(url: str, n: int) -> dict:
    """n duplex sessions one after the other: the long text, flush, first audio, then cancel."""
    import websockets

    ws_url = url.replace("http://", "ws://") + "/v1/duplex"
    waits, ok = [], 0
    for i in range(n):
        async with websockets.connect(ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "start", "commit": "auto", "seed": i}))
            if json.loads(await ws.recv())["type"] != "started":
                continue
            await ws.send(json.dumps({"type": "text", "text": LONG}))
            await ws.send(json.dumps({"type": "flush"}))
            while not isinstance(await ws.recv(), bytes):
                pass
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "cancel"}))
            async for m in ws:
                if isinstance(m, str) and json.loads(m)["type"] == "done":
                    ok += json.loads(m)["cancelled"] is True
                    waits.append(time.perf_counter() - t0)
                    break
    return {"sessions": n, "done_cancelled": ok, "cancel_to_done_p50_s": round(pct(waits, 0.5), 3),
            "cancel_to_done_max_s": round(max(waits, default=float("nan")), 3)}


def start_server(a) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(tempfile.mktemp(prefix="vox-serve-load-", suffix=".log"), "w")
    cmd = [sys.executable, "-m", "vox.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--voices", tempfile.mkdtemp(prefix="vox-load-voices-"), "--max-sessions", str(a.max_sessions),
           "--max-queue", str(a.max_queue), "--log-level", "warning"]
    for m in a.model or []:
        cmd += ["--model", m]
    if a.workers:
        cmd += ["--workers", str(a.workers)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    import urllib.request

    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"vox serve exited; log: {log.name}")
            time.sleep(0.2)
    raise RuntimeError("vox serve did not start")


async def main_async(a) -> dict:
    proc = None
    if a.url:
        url, pid = a.url.rstrip("/"), a.pid
    else:
        proc, url = start_server(a)
        pid = proc.pid
    try:
        warm = await load(url, 1, 3, None, [])          # first requests: the model's pages, the caches
        single = await load(url, 1, a.single_s, None, []) if a.single_s else None   # one client alone
        rss: list = []
        rss_start = rss_mib(pid) if pid else None
        result: dict = {"clients": a.clients, "max_sessions": a.max_sessions, "max_queue": a.max_queue,
                        "warmup": warm, "single_client": single, "rss_after_warmup_mib": rss_start}
        result["load"] = await load(url, a.clients, a.load_s, pid, rss)
        result["rss_after_load_mib"] = rss_mib(pid) if pid else None
        if a.soak_s:
            soak_rss: list = []
            result["soak"] = await load(url, a.clients, a.soak_s, pid, soak_rss)
            result["rss_soak_mib"] = soak_rss
            result["rss_after_soak_mib"] = rss_mib(pid) if pid else None
        result["rss_load_mib"] = rss
        result["disconnect"] = await disconnects(url, a.disconnects)
        result["cancel"] = await cancels(url, a.cancels)
        result["rss_end_mib"] = rss_mib(pid) if pid else None
        result["server_metrics"] = {k: v for k, v in (await metrics(url)).items()
                                    if k.startswith(("vox_server_sessions_total", "vox_server_cancelled_total",
                                                     "vox_server_first_audio_seconds_sum",
                                                     "vox_server_first_audio_seconds_count", "vox_server_rtf_sum",
                                                     "vox_server_rtf_count"))}
        return result
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", help="a running server (default: start one)")
    p.add_argument("--pid", type=int, help="the running server's pid, for its RSS")
    p.add_argument("--model", action="append", help="models for the started server (default: the built-in default model)")
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--single-s", type=float, default=20, help="seconds of one client alone, before the load")
    p.add_argument("--load-s", type=float, default=60)
    p.add_argument("--soak-s", type=float, default=180)
    p.add_argument("--max-sessions", type=int, default=16)
    p.add_argument("--max-queue", type=int, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--disconnects", type=int, default=8)
    p.add_argument("--cancels", type=int, default=4)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args(argv)
    load0 = os.getloadavg()[0]
    res = asyncio.run(main_async(a))
    res["machine"] = {"cpus": os.cpu_count(), "platform": sys.platform,
                      "load_average_1min_before_after": [round(load0, 2), round(os.getloadavg()[0], 2)]}
    text = json.dumps(res, indent=1)
    print(text)
    if a.json:
        Path(a.json).write_text(text)
    bad = res["load"]["errors"] + res.get("soak", {}).get("errors", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
