"""How the speech extractor scales: time per byte at 10 KB and 1 MB, and delta latency.

Run: uv run python bench/speech_extract.py
Arguments are fed in 1-byte fragments (the worst case a provider can send). The 1 MB / 10 KB
per-byte ratio shows linearity (goal: under 2); a no-op loop over the same fragments is the floor.
Latency is the in-process time from handing a fragment to `feed` until its delta is returned
(goal: well under 1 ms), alone and with the `say.delta` frame built and encoded.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time
from collections.abc import Callable

from starharness.npc.frames import SayDelta, encode
from starharness.npc.speech import LineExtractor

_WORDS = ["the", "dock", "is", "quiet", 'she said "no"', "back\\slash", "café", "😀", "\n", "{x}"]


def _arguments(size: int, seed: int = 1) -> str:
    """Speaking-tool arguments of about `size` bytes: other fields first, then a long line."""
    rng = random.Random(seed)
    head = {
        "mood": "friendly",
        "options": [{"id": str(n), "label": f"option {n} {{}}"} for n in range(4)],
        "meta": {"nested": [1, {"line": "not this one"}, 'a "quoted" } brace']},
    }
    prefix = json.dumps(head)[:-1] + ', "line": "'
    budget = size - len(prefix) - 2
    parts: list[str] = []
    used = 0
    while used < budget:
        word = json.dumps(rng.choice(_WORDS))[1:-1] + " "
        parts.append(word)
        used += len(word)
    text = prefix + "".join(parts)[:budget]
    text = text.rstrip("\\")  # never cut an escape in half at the end
    while not _is_complete_string_tail(text):
        text = text[:-1]
    return text + '"}'


def _is_complete_string_tail(text: str) -> bool:
    # Trimming may split a \uXXXX escape or leave a dangling backslash; check it still parses.
    try:
        json.loads(text + '"}')
    except ValueError:
        return False
    return True


def _per_byte_ns(run: Callable[[], None], size: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter_ns()
        run()
        best = min(best, time.perf_counter_ns() - start)
    return best / size


def _feed_bytewise(text: str) -> Callable[[], None]:
    def run() -> None:
        extractor = LineExtractor()
        feed = extractor.feed
        for char in text:
            feed(char)

    return run


def _feed_whole(text: str) -> Callable[[], None]:
    def run() -> None:
        LineExtractor().feed(text)

    return run


def _floor_bytewise(text: str) -> Callable[[], None]:
    def noop(fragment: str) -> str:
        return ""

    def run() -> None:
        for char in text:
            noop(char)

    return run


def _latencies(text: str, with_frame: bool) -> list[float]:
    rng = random.Random(7)
    extractor = LineExtractor()
    samples: list[float] = []
    pos = 0
    while pos < len(text):
        size = rng.randint(1, 8)  # about one model token per fragment
        fragment = text[pos : pos + size]
        pos += size
        start = time.perf_counter_ns()
        delta = extractor.feed(fragment)
        if delta and with_frame:
            encode(SayDelta(id="enc-1", text=delta))
        elapsed = time.perf_counter_ns() - start
        if delta:
            samples.append(elapsed / 1000)
    return samples


def _quantile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=1000)[int(q * 1000) - 1]


def main() -> None:
    small = _arguments(10_000)
    large = _arguments(1_000_000)
    expected = json.loads(large)["line"]
    extractor = LineExtractor()
    assert "".join(extractor.feed(char) for char in large) == expected, "extractor is wrong"

    small_ns = _per_byte_ns(_feed_bytewise(small), len(small), repeats=30)
    large_ns = _per_byte_ns(_feed_bytewise(large), len(large), repeats=3)
    floor_ns = _per_byte_ns(_floor_bytewise(large), len(large), repeats=3)
    ratio = large_ns / small_ns
    print(f"{len(small):>9,} bytes, 1-byte fragments: {small_ns:7.1f} ns/byte")
    print(f"{len(large):>9,} bytes, 1-byte fragments: {large_ns:7.1f} ns/byte")
    verdict = "linear" if ratio < 2 else "NOT linear"
    print(f"ratio 1 MB / 10 KB per byte: {ratio:.2f} (goal < 2: {verdict})")
    print(
        f"floor (no-op call per byte): {floor_ns:.1f} ns/byte; "
        f"extractor = {large_ns / floor_ns:.1f}x floor"
    )
    whole_ns = _per_byte_ns(_feed_whole(large), len(large), repeats=5)
    print(f"1 MB as one fragment: {whole_ns:.2f} ns/byte")

    for with_frame, label in ((False, "feed -> delta"), (True, "feed -> encoded say.delta")):
        samples = _latencies(large, with_frame)
        p50, p99 = _quantile(samples, 0.5), _quantile(samples, 0.99)
        print(
            f"latency {label:<26} p50 {p50:6.2f} us  p99 {p99:6.2f} us  "
            f"max {max(samples):8.2f} us  ({len(samples):,} deltas; goal well under 1000 us)"
        )


if __name__ == "__main__":
    main()
