"""Stands in for `python -m llama_cpp.server` in tests: same flags, answers GET /v1/models.

`--model` naming a file whose text is `exit` makes it exit at once, after saying why.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Handler(BaseHTTPRequestHandler):
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
    for flag in ("--model", "--chat_format", "--host", "--port", "--n_ctx"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    if Path(args.model).read_bytes().endswith(b"exit"):
        print("fake server: refusing to load this model", flush=True)
        sys.exit(3)
    print(f"fake server on {args.host}:{args.port} with n_ctx {args.n_ctx}", flush=True)
    ThreadingHTTPServer((args.host, int(args.port)), _Handler).serve_forever()


if __name__ == "__main__":
    main()
