#!/usr/bin/env python3
"""A real SMTP server for the project's tests, fault suite, browser tests and benchmarks
(aiosmtpd): it offers STARTTLS and requires it before AUTH (PLAIN or LOGIN, one user and
password), and writes every message it accepts to DIR as NNNNNN.eml. It prints "ready PORT"
once it listens. Run it with the virtual environment ops/install-deps makes:

  .build/browser-venv/bin/python ops/mail-sink.py --dir DIR --cert CERT --key KEY \
      [--port 0] [--user backoffice --password secret] [--refuse-after N]

--refuse-after N answers every message after the Nth with 451 (a server in trouble), for the
retry tests; --delay S waits S seconds before accepting each message (a slow relay), for the fault
suite's crash during delivery.
"""
import argparse
import asyncio
import itertools
import os
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, folder, refuse_after, delay):
        self.folder = folder
        self.refuse_after = refuse_after
        self.delay = delay
        self.counter = itertools.count(1)
        self.accepted = 0

    async def handle_DATA(self, server, session, envelope):
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.refuse_after is not None and self.accepted >= self.refuse_after:
            return "451 4.3.0 try again later"
        self.accepted += 1
        number = next(self.counter)
        path = os.path.join(self.folder, f"{number:06d}.eml")
        with open(path + ".part", "wb") as out:
            out.write(f"X-Envelope-From: {envelope.mail_from}\r\n".encode())
            out.write(f"X-Envelope-To: {','.join(envelope.rcpt_tos)}\r\n".encode())
            out.write(envelope.original_content)
        os.rename(path + ".part", path)
        return "250 2.0.0 queued"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        if isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password:
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)
    return check


def main():
    parser = argparse.ArgumentParser(description="A real SMTP server that writes what it accepts to a folder.")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user", default="backoffice")
    parser.add_argument("--password", default="mail-sink-password")
    parser.add_argument("--refuse-after", type=int, default=None)
    parser.add_argument("--delay", type=float, default=0)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    port = args.port
    if port == 0:
        import socket
        probe = socket.socket()
        probe.bind((args.host, 0))
        port = probe.getsockname()[1]
        probe.close()
    controller = Controller(
        Sink(args.dir, args.refuse_after, args.delay), hostname=args.host, port=port, tls_context=context, require_starttls=True,
        auth_required=True, auth_require_tls=True, authenticator=authenticator(args.user, args.password))
    controller.start()
    print(f"ready {port}", flush=True)
    try:
        asyncio.get_event_loop().run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    sys.exit(main())
