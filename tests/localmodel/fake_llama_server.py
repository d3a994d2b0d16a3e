"""Stands in for `python -m llama_cpp.server` in tests: same flags, answers GET /v1/models.

`--model` naming a file whose text ends in `exit` makes it exit at once, after saying why; one
ending in `crash` answers /v1/models but dies of SIGSEGV on its first completion (as a llama.cpp
built for another CPU does); one ending in `later` answers one completion and dies on the next.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODE = {"name": "", "completions": 0}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        self.rfile.read(int(self.headers.get("content-length", "0")))
        MODE["completions"] += 1
        if MODE["name"] == "crash" or (MODE["name"] == "later" and MODE["completions"] > 1):
            print("ggml_backend_amx_mul_mat: illegal instruction", flush=True)
            # To this thread, at once: a kill() of the process may let this thread answer first.
            signal.raise_signal(signal.SIGSEGV)
        body = json.dumps(
            {
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Hi"},
                        "finish_reason": "length",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        print("request:", format % args, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    flags = ("--model", "--chat_format", "--host", "--port", "--n_ctx")
    for flag in (*flags, "--n_threads", "--n_threads_batch"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    content = Path(args.model).read_bytes()
    if content.endswith(b"exit"):
        print("fake server: refusing to load this model", flush=True)
        sys.exit(3)
    for mode in ("crash", "later"):
        if content.endswith(mode.encode()):
            MODE["name"] = mode
    print(
        f"fake server on {args.host}:{args.port} with n_ctx {args.n_ctx}, "
        f"{args.n_threads} threads ({args.n_threads_batch} batch), chat {args.chat_format}",
        flush=True,
    )
    ThreadingHTTPServer((args.host, int(args.port)), _Handler).serve_forever()


if __name__ == "__main__":
    main()
