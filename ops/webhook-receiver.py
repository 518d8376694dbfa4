#!/usr/bin/env python3
"""A webhook receiver for tests and for trying `backoffice dev`'s webhooks by hand.

Listens on 127.0.0.1 (--port, 0 for any free port; prints `ready PORT`), checks each POST's
`Backoffice-Signature` with Stripe's own verifier (`stripe.WebhookSignature.verify_header`, the
library Stripe's users run) under --secret (repeatable: any of them may sign), answers the
statuses of --answers in turn (`500,200`: the first request 500, then 200; the last repeats),
after --delay seconds (a slow receiver), with a body of --answer-bytes bytes when given (a NUL
then `x`s: a large, awkward answer), and writes one JSON line per request to stdout: the event
id, type, the status answered and whether the signature verified.
"""
import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--secret", action="append", default=[])
parser.add_argument("--answers", default="200")
parser.add_argument("--tolerance", type=int, default=0, help="seconds; 0 checks no age (a test's clock)")
parser.add_argument("--delay", type=float, default=0, help="seconds to wait before answering")
parser.add_argument("--answer-bytes", type=int, default=0, help="answer with this many bytes: a NUL, then x's")
options = parser.parse_args()
import stripe  # noqa: E402 (after --help, which needs no third party's library)

answers = [int(a) for a in options.answers.split(",")]
seen = 0


def verified(payload: str, header: str) -> bool:
    for secret in options.secret:
        try:
            stripe.WebhookSignature.verify_header(payload, header, secret, options.tolerance or None)
            return True
        except stripe.SignatureVerificationError:
            continue
    return False


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        payload = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
        status = answers[min(seen, len(answers) - 1)]
        seen += 1
        event = json.loads(payload)
        line = {
            "id": event.get("id"), "type": event.get("type"), "header_id": self.headers.get("Backoffice-Event-Id"),
            "status": status, "verified": verified(payload, self.headers.get("Backoffice-Signature", "")),
        }
        print(json.dumps(line), flush=True)
        time.sleep(options.delay)
        body = b"\0" + b"x" * (options.answer_bytes - 1) if options.answer_bytes else b"ok" if status < 300 else b"not now"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", options.port), Receiver)
print(f"ready {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
