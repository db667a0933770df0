"""The consume step: a durable consumer group on a Subscribe stream, re-opened on another server
(or the leader a refusal names) whenever the stream fails.

The protocol (broker.proto, and the server's SubscribeSession):

* The first frame is ``init`` (topic, group). The server answers ``subscribed``, then pushes
  deliveries. A named group is durable: it is registered through Raft before it receives anything,
  and gets every message still pending, also those published before it first subscribed.
* Each delivery is acknowledged with an ``ack`` frame carrying its ``tag`` **on the stream that
  carried it**. A tag means nothing on another stream (the server answers
  ``AckReply{ok=false, INVALID_ARGUMENT}``); deliveries not acknowledged when a stream ends are
  redelivered, on the next stream, with new tags.
* A plain ACK is replicated with the next delete batch: if the leader dies first, the message
  comes back (at least once). An ACK with ``confirm`` is answered with an ``AckReply`` once it is
  committed; from then on the group never receives that message again.
* Keep reading while a confirmation is outstanding: the ``AckReply`` comes on the same stream,
  behind any deliveries the server wrote before it. A client that stops reading until its
  confirmation arrives waits forever. This example reads on one thread and never blocks on it.
* gRPC flow control is the only back-pressure: the server writes only while the client's window
  has room, so a slow reader is not flooded. Half-closing the stream ends it cleanly; ACKs sent
  before the half-close are processed first.

Threads: the main thread reads the stream and owns the stream's state; a watchdog thread ends the
stream when the step is done or its time is up. ``_lock`` guards what both read.
"""

import queue
import threading
import time

import grpc

from hourglass_api import Backoff, Failure, leader_hint, one_line, reconnectable


class _Stream:
    """One Subscribe call: where it goes, its outbound frames and what is pending on it."""

    def __init__(self, address):
        self.address = address
        self.frames = queue.Queue()  # None = half-close
        self.subscribed = False
        self.closing = False  # our side half-closed: the server completes the call next
        self.ended = False
        self.confirm_tag = None  # the tag whose confirmation is outstanding
        self.confirm_name = None

    def outbound(self):
        while True:
            frame = self.frames.get()
            if frame is None:
                return
            yield frame


class GroupConsumer:
    """Consumes ``topic`` as ``group`` until every published message has arrived; see the module doc."""

    def __init__(self, api, pool, topic, group, published, confirm_at, out):
        self._api = api
        self._pool = pool
        self._topic = topic
        self._group = group
        self._published = published  # id -> name, from the publish step
        self._confirm_at = confirm_at
        self._out = out
        self._lock = threading.Lock()
        # Guarded by _lock.
        self.received = set()
        self.confirmed = {}  # id -> name: ACKs the server confirmed
        self.plain_acked = set()
        self.deliveries = 0
        self.again = 0  # deliveries of a message received before
        self.violations = []  # names delivered after their ACK was confirmed
        self.streams = 0
        self._failed_attempts = 0  # main thread: attempts since the last stream that was subscribed

    def run(self, min_seconds, timeout_seconds):
        started = time.monotonic()
        backoff = Backoff()
        while True:
            address = self._pool.current
            self.streams += 1
            stream = _Stream(address)
            code, details, hint = self._consume(stream, started + min_seconds, started + timeout_seconds)
            if stream.closing and code == grpc.StatusCode.OK:
                self._out("consume: done: %d/%d received in %d deliveries (%d delivered again), %d ACK confirmed, "
                          "%d delivered after a confirmed ACK, %d Subscribe calls"
                          % (len(self.received & set(self._published)), len(self._published), self.deliveries,
                             self.again, len(self.confirmed), len(self.violations), self.streams))
                return
            if stream.subscribed:
                backoff.reset()
                self._failed_attempts = 0
            if time.monotonic() >= started + timeout_seconds:
                missing = len(set(self._published) - self.received)
                raise Failure("consume: %d of %d messages still missing after %.0f s (last: %s on %s)"
                              % (missing, len(self._published), timeout_seconds, code.name, address))
            if not reconnectable(code):
                raise Failure("consume: %s refused the subscription: %s: %s" % (address, code.name, details))
            followed = self._pool.move_off(address, hint)
            if followed:
                self._out("consume: %s refused: %s (%s); following hourglass-leader to %s"
                          % (address, code.name, one_line(details), self._pool.current))
            elif self._failed_attempts == 0:
                self._out("consume: stream on %s ended: %s (%s); reconnecting, next %s"
                          % (address, code.name, one_line(details), self._pool.current))
            self._failed_attempts += 1
            backoff.wait(followed)

    def _consume(self, stream, finish_after, give_up_at):
        """Runs one stream to its end; returns its status code, details and leader hint."""
        stream.frames.put(self._api.broker.SubscribeRequest(
            init=self._api.broker.SubscribeInit(topic=self._topic, group=self._group)))
        call = self._api.subscribe(self._pool.channel(stream.address))(stream.outbound())
        watchdog = threading.Thread(target=self._watch, args=(call, stream, finish_after, give_up_at),
                                    name="consume-watchdog", daemon=True)
        watchdog.start()
        try:
            for frame in call:
                kind = frame.WhichOneof("frame")
                if kind == "subscribed":
                    with self._lock:
                        stream.subscribed = True
                    self._out("consume: subscribed to %s as group %s on %s (consumer %s)%s"
                              % (self._topic, self._group, stream.address, frame.subscribed.consumer_id,
                                 " after %d failed attempt(s)" % self._failed_attempts
                                 if self._failed_attempts else ""))
                elif kind == "delivery":
                    self._on_delivery(stream, frame.delivery)
                elif kind == "ack_reply":
                    self._on_ack_reply(stream, frame.ack_reply)
            return grpc.StatusCode.OK, "the server completed the stream", None
        except grpc.RpcError as e:
            return e.code(), e.details(), leader_hint(e)
        finally:
            with self._lock:
                stream.ended = True
                lost = stream.confirm_name
                stream.confirm_tag = None
            stream.frames.put(None)
            if lost is not None:
                self._out("consume: the stream ended before the ACK of %s was confirmed: it may come back; "
                          "the next delivery's ACK will be confirmed instead" % lost)

    def _on_delivery(self, stream, delivery):
        name = self._published.get(delivery.id, "(not published by this run)")
        with self._lock:
            self.deliveries += 1
            seen = delivery.id in self.received
            self.again += 1 if seen else 0
            if delivery.id in self.confirmed:
                self.violations.append(name)
            self.received.add(delivery.id)
            confirm = (not self.confirmed and stream.confirm_tag is None and not stream.closing
                       and len(self.received) >= self._confirm_at)
            if confirm:
                stream.confirm_tag, stream.confirm_name = delivery.tag, name
            else:
                self.plain_acked.add(delivery.id)
        if delivery.id in self.confirmed:
            self._out("consume: ERROR %s delivered again after its ACK was confirmed" % name)
        # Sent on this stream, after the frames before it: the server sees ACKs in our order.
        stream.frames.put(self._api.broker.SubscribeRequest(
            ack=self._api.broker.Ack(tag=delivery.tag, confirm=confirm)))
        self._out("consume: %s id=%s attempt %d on %s: %s%s"
                  % (name, delivery.id, delivery.attempt, stream.address,
                     "ACK with confirm" if confirm else "ACK",
                     " (delivered again: its ACK had not been replicated, or it was not acked)" if seen else ""))

    def _on_ack_reply(self, stream, reply):
        with self._lock:
            mine = stream.confirm_tag is not None and reply.tag == stream.confirm_tag
            name = stream.confirm_name
            if mine:
                stream.confirm_tag = stream.confirm_name = None
                if reply.ok:
                    self.confirmed[reply.tag.hex()] = name
        if mine and reply.ok:
            self._out("consume: ACK of %s confirmed by the server: group %s will never receive it again"
                      % (name, self._group))
        elif mine:
            self._out("consume: ACK of %s not confirmed (code %d: %s); the next delivery's ACK will be"
                      " confirmed instead" % (name, reply.code, one_line(reply.error)))
        elif not reply.ok:
            self._out("consume: the server refused an ACK (code %d: %s)" % (reply.code, one_line(reply.error)))

    def _done(self, stream):
        return (stream.subscribed and stream.confirm_tag is None and bool(self.confirmed)
                and set(self._published) <= self.received)

    def _watch(self, call, stream, finish_after, give_up_at):
        """Half-closes the stream once the step is done; cancels it when its time is up."""
        while True:
            time.sleep(0.1)
            with self._lock:
                if stream.ended:
                    return
                finish = not stream.closing and time.monotonic() >= finish_after and self._done(stream)
                if finish:
                    stream.closing = True
            if finish:
                stream.frames.put(None)
            if time.monotonic() >= give_up_at:
                call.cancel()
                return
