"""Stands in for `python -m llama_cpp.server` in tests: same flags, answers GET /v1/models.

A streamed completion that forces a tool answers at once with that tool's call: a decision
(a schema with an `action` property) decides `none`; any other tool gets a line with two
options. It logs each as llama-cpp-python's verbose server does (an access line, then
`Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`, then llama.cpp's
prompt and generation times), counting the prompt
in messages: the first request evaluates them all, the next only the ones it adds.

`--model` naming a file whose text ends in `exit` makes it exit at once, after saying why; one
ending in `crash` answers /v1/models but dies of SIGSEGV on its first completion (as a llama.cpp
built for another CPU does); one ending in `later` answers one completion and dies on the next.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODE = {"name": "", "completions": 0, "messages": 0}
_DECISION = {"action": {"name": "none"}}
_SPEECH = {
    "line": "Evening. What brings you here?",
    "mood": "neutral",
    "options": [{"id": "buy", "label": "What do you sell?"}, {"id": "bye", "label": "Bye."}],
}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or "{}")
        MODE["completions"] += 1
        if MODE["name"] == "crash" or (MODE["name"] == "later" and MODE["completions"] > 1):
            print("ggml_backend_amx_mul_mat: illegal instruction", flush=True)
            # To this thread, at once: a kill() of the process may let this thread answer first.
            signal.raise_signal(signal.SIGSEGV)
        if request.get("stream") and isinstance(request.get("tool_choice"), dict):
            self._stream_call(request)
            return
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

    def _stream_call(self, request: dict[str, object]) -> None:
        self.send_response(200)  # logs the request line first, as uvicorn does
        messages = request.get("messages")
        count = len(messages) if isinstance(messages, list) else 0
        reused, MODE["messages"] = min(MODE["messages"], count), count
        if reused:
            print(
                f"Llama.generate: {reused} prefix-match hit, "
                f"remaining {count - reused} prompt tokens to eval",
                flush=True,
            )
        print(
            f"llama_perf_context_print: prompt eval time =       1.50 ms / {count - reused:6d} "
            "tokens\nllama_perf_context_print:        eval time =       2.50 ms /    12 runs",
            flush=True,
        )
        choice = request["tool_choice"]
        name = choice["function"]["name"] if isinstance(choice, dict) else ""
        tools = request.get("tools")
        tool = (
            next((t for t in tools if t["function"]["name"] == name), {})
            if isinstance(tools, list)
            else {}
        )
        properties = tool.get("function", {}).get("parameters", {}).get("properties", {})
        arguments = json.dumps(_DECISION if "action" in properties else _SPEECH)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        call = {"index": 0, "id": "call_0", "type": "function"}
        pieces = [
            {**call, "function": {"name": name, "arguments": ""}},
            *(
                {"index": 0, "function": {"arguments": arguments[i : i + 8]}}
                for i in range(0, len(arguments), 8)
            ),
        ]
        for piece in pieces:
            chunk = {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        done = {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        }
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

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
    parser.add_argument("--logits_all", required=True)
    parser.add_argument("--interrupt_requests", required=True)
    for flag in ("--n_batch", "--n_ubatch", "--cache", "--cache_type", "--cache_size"):
        parser.add_argument(flag)
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
        f"{args.n_threads} threads ({args.n_threads_batch} batch), chat {args.chat_format}, "
        f"logits_all {args.logits_all}, interrupt_requests {args.interrupt_requests}, "
        f"n_batch {args.n_batch}/{args.n_ubatch}, "
        f"cache {args.cache} {args.cache_type} {args.cache_size}, "
        f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY')}, "
        f"GOMP_SPINCOUNT {os.environ.get('GOMP_SPINCOUNT')}",
        flush=True,
    )
    ThreadingHTTPServer((args.host, int(args.port)), _Handler).serve_forever()


if __name__ == "__main__":
    main()
