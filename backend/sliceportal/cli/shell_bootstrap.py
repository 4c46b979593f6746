"""p4runtime-shell on a managed switch: run by `.venv-shell/bin/python`, never imported by the
portal.

`sliceportal shell SWITCH` (cli/shell.py) looks the switch up in the portal's database and
replaces itself with `.venv-shell/bin/python -I this-file --grpc-addr … --device-id …
--election-id … --p4info … [TLS paths] [--exec FILE]`. This file runs in p4runtime-shell's own
environment (protobuf<3.21, p4runtime==1.4.1: pins that must not reach the portal's), so it
imports nothing from the portal: its arguments are all it knows.

What it changes in p4runtime-shell 0.0.6 (`p4runtime_sh.shell.main` and
`p4runtime_sh.p4runtime.P4RuntimeClient`), without editing its files:

- the P4Info is the portal's (a file), not the one `setup()` fetches with
  GetForwardingPipelineConfig, and no pipeline is ever pushed (`setup(config=None)` would not
  push one either, but it needs the switch to hold a pipeline already to hand out its P4Info);
- the client arbitrates as a backup: its election id is below the portal's, given by the caller;
  it prints which role the switch gave it on stderr, not stdout (the library prints there);
- the channel has the portal's TLS settings (a secure channel as soon as any of CA, certificate
  or key is given, as the portal's adapter builds it) and its message size limit (a counter
  array read in one wildcard exceeds gRPC's default 4 MiB);
- an unreachable switch or a refused arbitration is one line on stderr and exit status 1 (the
  library logs several lines and calls `sys.exit(1)` after a fixed 2 s);
- `--exec FILE` runs FILE with the shell's names (TableEntry, CounterEntry, p4info, …: exactly
  the namespace `main()` gives IPython, since `main()` builds it here too) instead of starting
  IPython, needs no terminal and exits with the script's status.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from pathlib import Path

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4runtime_sh import shell
from p4runtime_sh.p4runtime import P4RuntimeClient

MAX_MESSAGE_BYTES = 64 << 20  # as the portal's adapter
_LOW_64 = (1 << 64) - 1
_OK = grpc.StatusCode.OK.value[0]


class ShellSetupError(Exception):
    """Why the shell could not start: one line for stderr."""


class _StreamErrors(logging.Handler):
    """Keeps what p4runtime-shell logs when its StreamChannel breaks (it logs instead of
    raising): the reason of a refused arbitration, or of a stream lost later."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []
        self.quiet = True  # before the handshake the reason goes into the error line

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message == "StreamChannel error, closing stream":
            return
        self.messages.append(message)
        if not self.quiet:
            sys.stderr.write(f"p4runtime-shell: {message}\n")


class BackupClient(P4RuntimeClient):
    """p4runtime-shell's client on a channel built here, arbitrating once without exiting.

    `P4RuntimeClient.__init__` is not called: it opens a channel without options and, when the
    switch does not answer within 2 s, logs and calls `sys.exit(1)`. The stream machinery
    (`set_up_stream`, its receive thread and queues) and every RPC method are the library's.
    """

    def __init__(self, args: argparse.Namespace, errors: _StreamErrors) -> None:
        self.device_id = args.device_id
        self.election_id = (args.election_id >> 64, args.election_id & _LOW_64)
        self.role_name = None
        self.timeout_s = args.timeout
        self.errors = errors
        self.is_primary = False
        self.address = args.grpc_addr
        self.channel = _channel(args)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=self.timeout_s)
        except grpc.FutureTimeoutError:
            self.channel.close()
            raise ShellSetupError(
                f"the switch at {self.address} does not answer within {self.timeout_s:g} s"
                + (" (check its TLS settings)" if _uses_tls(args) else "")
            ) from None
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.set_up_stream()  # calls handshake()

    def handshake(self) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high = self.election_id[0]
        request.arbitration.election_id.low = self.election_id[1]
        self.stream_out_q.put(request)
        reply = self.get_stream_packet("arbitration", timeout=self.timeout_s)
        if reply is None:
            why = self.errors.messages[-1] if self.errors.messages else "no answer"
            self.tear_down()
            raise ShellSetupError(f"the switch at {self.address} refused the arbitration: {why}")
        self.errors.quiet = False
        self.is_primary = reply.arbitration.status.code == _OK


def _uses_tls(args: argparse.Namespace) -> bool:
    return any((args.cacert, args.cert, args.private_key))


def _channel(args: argparse.Namespace) -> grpc.Channel:
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    if not _uses_tls(args):
        return grpc.insecure_channel(args.grpc_addr, options=options)

    def pem(path: str | None) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise ShellSetupError(f"cannot read {path}: {exc.strerror}") from None

    credentials = grpc.ssl_channel_credentials(
        root_certificates=pem(args.cacert),
        private_key=pem(args.private_key),
        certificate_chain=pem(args.cert),
    )
    return grpc.secure_channel(args.grpc_addr, credentials, options=options)


def _load_p4info(path: Path) -> p4info_pb2.P4Info:
    message = p4info_pb2.P4Info()
    try:
        text_format.Merge(path.read_text(), message, allow_unknown_field=True)
    except OSError as exc:
        raise ShellSetupError(f"cannot read the P4Info {path}: {exc.strerror}") from None
    except text_format.ParseError as exc:
        raise ShellSetupError(f"the P4Info {path} is not a text P4Info: {exc}") from None
    return message


def _describe(client: BackupClient, args: argparse.Namespace) -> str:
    where = f"{args.switch_name} ({args.grpc_addr}, device {args.device_id})"
    if client.is_primary:
        return (
            f"connected to {where} with election id {args.election_id}; no controller is "
            "primary, so this shell is until the portal arbitrates again (its id is higher): "
            "leave writing to the portal"
        )
    return (
        f"connected to {where} as a backup controller (election id {args.election_id}, below "
        "the portal's): reads only, the portal stays primary"
    )


def _run_script(path: Path, user_ns: dict[str, object]) -> int:
    """Run the script as `__main__` with the shell's names; its exit status."""
    namespace = dict(user_ns, __name__="__main__", __file__=str(path), __builtins__=__builtins__)
    sys.argv = [str(path)]
    try:
        code = compile(path.read_text(), str(path), "exec")
        exec(code, namespace)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        sys.stderr.write(f"{exc.code}\n")
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sliceportal shell (bootstrap)")
    parser.add_argument("--switch-name", required=True)
    parser.add_argument("--grpc-addr", required=True)
    parser.add_argument("--device-id", type=int, required=True)
    parser.add_argument("--election-id", type=int, required=True)
    parser.add_argument("--p4info", type=Path, required=True)
    parser.add_argument("--cacert")
    parser.add_argument("--cert")
    parser.add_argument("--private-key")
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--exec", dest="script", type=Path)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _parse(argv)
    errors = _StreamErrors()
    logging.getLogger().addHandler(errors)  # p4runtime-shell logs on the root logger
    try:
        p4info = _load_p4info(args.p4info)
        client = BackupClient(args, errors)
    except ShellSetupError as exc:
        sys.stderr.write(f"sliceportal: {exc}\n")
        return 1

    def setup(*_args: object, **_kwargs: object) -> None:
        """Replaces `shell.setup`, called by `shell.main()`: our client and P4Info."""
        shell.client = client
        shell.context.set_p4info(p4info)
        shell.global_options["verbose"] = args.script is None

    status = 0

    def run_script(*, user_ns: dict[str, object], **_kwargs: object) -> None:
        """Replaces `start_ipython` for `--exec`: the script instead of a terminal."""
        nonlocal status
        status = _run_script(args.script, user_ns)

    shell.setup = setup
    if args.script is not None:
        shell.start_ipython = run_script
    else:
        sys.stderr.write(_describe(client, args) + "\n")
    sys.argv = ["p4runtime-sh"]  # main() parses its own arguments: the defaults, unused
    try:
        shell.main()  # builds the namespace, runs IPython (or the script), tears down
    finally:
        if shell.client is not None and getattr(shell.client, "channel", None) is not None:
            shell.client.tear_down()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
