"""The Hourglass gRPC API from Python: message classes generated from the shipped .proto files,
RPCs called through grpcio's generic method handles, and the rules every call follows.

No gRPC stub generator is needed: ``protoc --python_out`` makes the message classes, and
``channel.unary_unary('/hourglass.v1.Broker/Publish', ...)`` calls a method by its full name.

The rules (from the Java client: ServerPool, StatusMapping, Subscription, RoomReconnects):

* Any node serves any client, but only the leader dispatches and runs rooms. A node that cannot
  serve a call answers ``UNAVAILABLE``; when it knows the leader it names it in the trailer
  ``hourglass-leader`` (``host:port`` of the leader's client port). Go there at once.
* ``UNAVAILABLE`` without a hint is an election under way, a node that is down, or one that is
  stopping: try the next server, every 50 ms during the first 3 s of an outage (a failover elects
  a leader within about a second), then with a doubling pause of up to 1 s.
* Other codes are answers, not outages: INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE,
  NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, UNAUTHENTICATED and UNIMPLEMENTED are never retried.

Threads: a ServerPool is used by one thread (the example's main thread).
"""

import importlib
import os
import shutil
import subprocess
import sys
import time

import grpc

LEADER_TRAILER = "hourglass-leader"

# Codes that answer the request; retrying cannot change them (the Java client's StatusMapping).
FINAL_CODES = (
    grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.UNIMPLEMENTED)

PROTOS = ("hourglass/v1/broker.proto", "hourglass/v1/rooms.proto")


class SetupError(Exception):
    """Something the example needs is missing on this machine (a package, the .proto files)."""


class Failure(Exception):
    """A step did not do what it must; the message is the example's one-line error."""


def default_proto_dir():
    """The .proto files of the source tree this example lives in."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "client", "src", "main", "proto"))


def load_api(proto_dir, out_dir):
    """Generates the message classes of broker.proto and rooms.proto into out_dir and imports them."""
    for proto in PROTOS:
        if not os.path.isfile(os.path.join(proto_dir, proto)):
            raise SetupError("no %s under %s: pass --protos DIR (a directory holding hourglass/v1/*.proto)"
                             % (proto, proto_dir))
    protoc = shutil.which("protoc")
    if protoc is None:
        raise SetupError("protoc not found: install Debian's protobuf-compiler (apt-get install protobuf-compiler)")
    done = subprocess.run([protoc, "-I" + proto_dir, "--python_out=" + out_dir, *PROTOS],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SetupError("protoc failed: " + " ".join(done.stderr.split()))
    # Regular packages, so that no other "hourglass" module on sys.path can shadow them.
    for package in ("hourglass", os.path.join("hourglass", "v1")):
        open(os.path.join(out_dir, package, "__init__.py"), "a").close()
    sys.path.insert(0, out_dir)
    try:
        broker = importlib.import_module("hourglass.v1.broker_pb2")
        rooms = importlib.import_module("hourglass.v1.rooms_pb2")
    except ImportError as e:
        raise SetupError("cannot import the generated classes (%s): install Debian's python3-protobuf" % e)
    return Api(broker, rooms)


class Api:
    """The message modules and a callable per RPC, made on a channel by its method's full name."""

    def __init__(self, broker, rooms):
        self.broker = broker
        self.rooms = rooms

    def publish(self, channel):
        return channel.unary_unary("/hourglass.v1.Broker/Publish",
                                   request_serializer=self.broker.PublishRequest.SerializeToString,
                                   response_deserializer=self.broker.PublishResponse.FromString)

    def subscribe(self, channel):
        return channel.stream_stream("/hourglass.v1.Broker/Subscribe",
                                     request_serializer=self.broker.SubscribeRequest.SerializeToString,
                                     response_deserializer=self.broker.SubscribeResponse.FromString)

    def room_session(self, channel):
        return channel.stream_stream("/hourglass.v1.Rooms/Session",
                                     request_serializer=self.rooms.SessionRequest.SerializeToString,
                                     response_deserializer=self.rooms.SessionResponse.FromString)

    def room_send(self, channel):
        return channel.unary_unary("/hourglass.v1.Rooms/Send",
                                   request_serializer=self.rooms.RoomSendRequest.SerializeToString,
                                   response_deserializer=self.rooms.RoomSendResponse.FromString)


def leader_hint(error):
    """The leader a refusing node named in its trailers, or None."""
    for key, value in error.trailing_metadata() or ():
        if key == LEADER_TRAILER:
            return value
    return None


def reconnectable(code):
    return code not in FINAL_CODES


class ServerPool:
    """The servers the user named plus leaders that followers named, one channel each, and the one
    in use. Calls stick to the current server and move off it only when it fails."""

    def __init__(self, addresses):
        if not addresses:
            raise SetupError("--servers names no server")
        self._addresses = list(addresses)
        self._channels = {}
        self._current = 0

    @property
    def current(self):
        return self._addresses[self._current]

    def channel(self, address):
        if address not in self._channels:
            self._channels[address] = grpc.insecure_channel(address)
        return self._channels[address]

    def move_off(self, failed, hint):
        """Leaves server `failed`: for the leader it named if it named another one (returns True),
        else for the next server in the list (returns False)."""
        if hint and hint != failed:
            if hint not in self._addresses:
                self._addresses.append(hint)
            self._current = self._addresses.index(hint)
            return True
        if self.current == failed:
            self._current = (self._current + 1) % len(self._addresses)
        return False

    def close(self):
        for channel in self._channels.values():
            channel.close()


class Backoff:
    """The pause before the next attempt of an outage: 50 ms for its first 3 s, then doubling to 1 s.
    A redirect to a named leader is followed at once, unless the last attempt was one too."""

    def __init__(self):
        self.reset()

    def reset(self):
        """A call worked: the next failure starts a new outage."""
        self._since = None
        self._pause = 0.05
        self._followed = False

    def wait(self, followed):
        now = time.monotonic()
        if self._since is None:
            self._since = now
        if followed and not self._followed:
            self._followed = True
            return
        self._followed = followed
        if now - self._since > 3.0:
            self._pause = min(self._pause * 2, 1.0)
        time.sleep(self._pause)


def call_unary(pool, method, request, what, out, give_up_after=30.0, attempt_timeout=5.0):
    """Calls a unary RPC (``method(channel)`` makes the callable), retrying as the module doc says.

    A request retried after UNAVAILABLE or DEADLINE_EXCEEDED may have been applied the first time:
    only retry requests that carry producer ids (the broker answers a repeated id with the first
    message's id and stores nothing); this example's do.
    """
    give_up_at = time.monotonic() + give_up_after
    backoff = Backoff()
    failures = 0
    while True:
        address = pool.current
        try:
            answer = method(pool.channel(address))(request, timeout=attempt_timeout)
            if failures:
                out("%s: answered by %s after %d failed attempt(s)" % (what, address, failures))
            return answer
        except grpc.RpcError as e:
            code = e.code()
            if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise Failure("%s: %s answered %s: %s" % (what, address, code.name, e.details()))
            if time.monotonic() > give_up_at:
                raise Failure("%s: no server answered within %.0f s (last: %s %s: %s)"
                              % (what, give_up_after, address, code.name, e.details()))
            followed = pool.move_off(address, leader_hint(e))
            if followed or not failures:  # the first failure of an outage, and every redirect
                out("%s: %s answered %s (%s); %s" % (what, address, code.name, one_line(e.details()),
                                                     ("following hourglass-leader to " if followed
                                                      else "retrying, next ") + pool.current))
            failures += 1
            backoff.wait(followed)


def one_line(text, limit=120):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
