"""How the client reaches a switch: channel options, TLS, readiness, and arbitration on its
StreamChannel.

- Channel options: P4Runtime's per-update errors of a failed batch travel in the
  `grpc-status-details-bin` trailer, which exceeds gRPC's default metadata limit for big
  batches (the specification advises 8192 + 100 bytes per update; we allow 1 KiB per update,
  since error messages vary), and big reads exceed the default message size.
- TLS and mutual TLS from the switch's configured CA, certificate and key.
- Arbitration on demand (`StreamChannel`): a session opens its StreamChannel, with the switch's
  election id, only to write or push a pipeline. Readers (the telemetry poller) never compete
  for mastership, and the control plane releases it after each reconciliation, since a second
  stream with the same election id is refused and every worker process has its own session.
  Errors are raised, never `sys.exit` (as p4runtime-shell's client does when a switch does not
  answer).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped, unused-ignore]

from sliceportal.p4rt.errors import SwitchError, TransientSwitchError, rpc_error
from sliceportal.p4rt.proto import p4r, p4r_grpc
from sliceportal.schemas.choices import SwitchKind

if TYPE_CHECKING:
    from sliceportal.db.models import Switch

logger = logging.getLogger(__name__)

METADATA_BYTES_PER_UPDATE = 1024
MAX_MESSAGE_BYTES = 64 << 20
_LOW_64 = (1 << 64) - 1


@dataclass(frozen=True)
class SwitchTarget:
    """How to reach one switch: what a session is keyed by (a change means a new session)."""

    switch_id: int
    address: str
    device_id: int
    election_id: int
    tls_ca_path: str | None = None
    tls_cert_path: str | None = None
    tls_key_path: str | None = None
    kind: SwitchKind = SwitchKind.EMULATOR
    """What the target is (whether it needs a device config); targets made by hand in tests,
    benchmarks and experiments are emulators unless they say otherwise."""

    @classmethod
    def of(cls, switch: Switch) -> SwitchTarget:
        return cls(
            switch.id,
            switch.address,
            switch.device_id,
            switch.election_id,
            switch.tls_ca_path,
            switch.tls_cert_path,
            switch.tls_key_path,
            kind=switch.kind,
        )

    @property
    def uses_tls(self) -> bool:
        return any((self.tls_ca_path, self.tls_cert_path, self.tls_key_path))

    @property
    def election_uint128(self) -> p4r.Uint128:
        return p4r.Uint128(high=self.election_id >> 64, low=self.election_id & _LOW_64)


def open_channel(target: SwitchTarget, batch_size: int) -> Any:
    """A gRPC channel to `target` with the options above (TLS when configured)."""
    options = [
        ("grpc.max_metadata_size", 8192 + METADATA_BYTES_PER_UPDATE * batch_size),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # gRPC backs off up to 2 minutes between reconnections; a restarted switch should be
        # found again within seconds.
        ("grpc.initial_reconnect_backoff_ms", 250),
        ("grpc.max_reconnect_backoff_ms", 2000),
        # gRPC shares one connection per address between channels by default: a new session
        # then inherited another channel's attempt still failing against the switch before
        # it restarted, and `wait_until_ready` reported that stale failure as its own.
        ("grpc.use_local_subchannel_pool", 1),
    ]
    if not target.uses_tls:
        return grpc.insecure_channel(target.address, options=options)

    def pem(path: str | None) -> bytes | None:
        if path is None:
            return None
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise SwitchError(f"cannot read {path}: {exc.strerror}") from None

    credentials = grpc.ssl_channel_credentials(
        root_certificates=pem(target.tls_ca_path),
        private_key=pem(target.tls_key_path),
        certificate_chain=pem(target.tls_cert_path),
    )
    return grpc.secure_channel(target.address, credentials, options=options)


def wait_until_ready(channel: Any, address: str, timeout_s: float) -> None:
    """Wait for `channel` to connect. TransientSwitchError (UNAVAILABLE) when an attempt made
    while waiting fails (refused, TLS handshake failed), or after `timeout_s` without an
    answer: gRPC itself would keep trying, and a task would sit out its whole timeout.

    The first state reported is the channel's current one: a channel in back-off reports its
    last failure first, which is no attempt of ours. Any failure reported after it is, even
    without a CONNECTING before it: gRPC reports changes as it polls them, and a refused
    connection goes from IDLE through CONNECTING to TRANSIENT_FAILURE faster than that (it
    reported IDLE, TRANSIENT_FAILURE in most trials, and waiting for a CONNECTING made a closed
    port cost the whole timeout)."""
    states: queue.SimpleQueue[Any] = queue.SimpleQueue()
    channel.subscribe(states.put, try_to_connect=True)
    deadline = time.monotonic() + timeout_s
    current = True  # the first state reported
    try:
        while True:
            try:
                state = states.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                problem = f"no answer from {address} within {timeout_s:g} s"
                break
            if state == grpc.ChannelConnectivity.READY:
                return
            failed = state == grpc.ChannelConnectivity.TRANSIENT_FAILURE and not current
            current = False
            if state == grpc.ChannelConnectivity.SHUTDOWN or failed:
                problem = f"cannot connect to {address}"
                break
    finally:
        channel.unsubscribe(states.put)
    raise TransientSwitchError(problem, grpc.StatusCode.UNAVAILABLE)


class StreamChannel:
    """The session's StreamChannel to one switch, opened to arbitrate and closed to give up
    mastership (the channel stays). A thread receives the switch's messages: arbitration
    updates (which say whether we are primary) are kept; the rest (packet-ins, digests, stream
    errors: the portal asks for none) are logged."""

    def __init__(self, channel: Any, target: SwitchTarget, timeout_s: float) -> None:
        self._stub = p4r_grpc.P4RuntimeStub(channel)
        self._target = target
        self._timeout_s = timeout_s
        self._requests: queue.SimpleQueue[p4r.StreamMessageRequest | None] | None = None
        self._arbitration: queue.SimpleQueue[p4r.StreamMessageResponse | None] = queue.SimpleQueue()
        self._call: Any = None
        self._thread: threading.Thread | None = None
        self.is_primary = False

    @property
    def open(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def arbitrate(self) -> None:
        """Open the stream unless it is open (a stream the switch dropped is reopened), send
        our MasterArbitrationUpdate and wait for the switch's answer."""
        if self.open:
            return
        self.close()
        requests: queue.SimpleQueue[p4r.StreamMessageRequest | None] = queue.SimpleQueue()
        self._requests = requests
        self._arbitration = queue.SimpleQueue()

        def outgoing() -> Iterator[p4r.StreamMessageRequest]:
            while (request := requests.get()) is not None:
                yield request

        try:
            self._call = self._stub.StreamChannel(outgoing())
        except grpc.RpcError as exc:
            raise rpc_error(exc, "StreamChannel") from None
        self._thread = threading.Thread(
            target=self._receive, args=(self._call, self._arbitration), daemon=True
        )
        self._thread.start()
        request = p4r.StreamMessageRequest()
        request.arbitration.device_id = self._target.device_id
        request.arbitration.election_id.CopyFrom(self._target.election_uint128)
        requests.put(request)
        try:
            reply = self._arbitration.get(timeout=self._timeout_s)
        except queue.Empty:
            reply = None
        if reply is None:
            self.close()
            raise TransientSwitchError(
                "the switch did not answer the arbitration (stream closed or refused; "
                "is another controller using this election id?)",
                grpc.StatusCode.UNAVAILABLE,
            )
        self.is_primary = reply.arbitration.status.code == grpc.StatusCode.OK.value[0]

    def _receive(
        self, call: Any, arbitration: queue.SimpleQueue[p4r.StreamMessageResponse | None]
    ) -> None:
        try:
            for response in call:
                if response.HasField("arbitration"):
                    self.is_primary = response.arbitration.status.code == 0
                    arbitration.put(response)
                else:
                    logger.debug("stream message ignored: %s", response.WhichOneof("update"))
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                logger.info("StreamChannel to %s ended: %s", self._target.address, exc.details())
        finally:
            self.is_primary = False
            arbitration.put(None)

    def close(self) -> None:
        """Close the stream (giving up mastership), keeping the channel."""
        if self._requests is not None:
            self._requests.put(None)
        if self._thread is not None:
            self._thread.join(self._timeout_s)
            if self._thread.is_alive():
                self._call.cancel()
                self._thread.join(self._timeout_s)
        self._requests = self._call = self._thread = None
        self.is_primary = False
