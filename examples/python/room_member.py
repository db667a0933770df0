"""The room step: join a lock-step room as a SYNC member, receive a message, ack it.

The protocol (rooms.proto, /work/shared/ROOMS.md, and the server's RoomSession):

* One ``Rooms.Session`` stream is one client session. Its first frame is ``open``; the server
  answers ``opened`` with a broker-issued client id, which changes with every stream.
* Every later frame carries a ``request_id`` that the server echoes in its ``reply``, whose
  ``outcome`` names what happened (SUBSCRIBED, ACKED, NOT_IN_FLIGHT, ...). A refused request
  leaves the stream open.
* ``subscribe`` carries a ``session_id`` of the client's own, the same on every subscribe of the
  session, resubscribes on a new stream included: a new leader uses it to know when the members
  that held the in-flight message are back. After a reconnect, ``held_message_id`` names the
  ackable message the client still holds.
* Subscribe before anything is sent: a room without SYNC members keeps no backlog, and a newcomer
  never receives the message already in flight.
* A delivery with ``ackable`` must be acked (``ack`` with room and message id); until every SYNC
  member has acked it, the room releases nothing else. A SYNC member must also send something
  (``ping``, an ack, a subscribe) within its heartbeat timeout (``opened.client_timeout_ms``) or it
  is evicted; ping every third of it. This step is shorter than the default 30 s.
* Only the leader runs rooms: a follower ends the session, and refuses ``Send``, with
  ``UNAVAILABLE`` and the ``hourglass-leader`` trailer. Sends carry a producer id, so a retried
  send is not enqueued twice.
"""

import queue

import grpc

from hourglass_api import Backoff, Failure, call_unary, leader_hint, one_line, reconnectable


class RoomMember:
    def __init__(self, api, pool, room, session_id, out):
        self._api = api
        self._pool = pool
        self._room = room
        self._session_id = session_id
        self._out = out

    def run(self, timeout_seconds):
        """Joins, sends, receives and acks on one session; a session that fails is opened anew."""
        backoff = Backoff()
        while True:
            address = self._pool.current
            try:
                return self._session(address, timeout_seconds)
            except grpc.RpcError as e:
                code = e.code()
                if not reconnectable(code) or code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise Failure("room: session on %s failed: %s: %s" % (address, code.name, e.details()))
                followed = self._pool.move_off(address, leader_hint(e))
                self._out("room: session on %s ended: %s (%s); %s" % (
                    address, code.name, one_line(e.details()),
                    ("following hourglass-leader to " if followed else "trying ") + self._pool.current))
                backoff.wait(followed)

    def _session(self, address, timeout_seconds):
        rooms = self._api.rooms
        frames = queue.Queue()

        def outbound():
            while True:
                frame = frames.get()
                if frame is None:
                    return
                yield frame

        frames.put(rooms.SessionRequest(open=rooms.SessionOpen(client_timeout_ms=0)))
        call = self._api.room_session(self._pool.channel(address))(outbound(), timeout=timeout_seconds)
        try:
            events = iter(call)
            opened = self._next(events, "opened").opened
            self._out("room: session opened on %s as client %s (heartbeat timeout %d ms)"
                      % (address, opened.client_id, opened.client_timeout_ms))

            frames.put(rooms.SessionRequest(request_id=1, subscribe=rooms.RoomSubscribe(
                room=self._room, mode=rooms.SYNC, session_id=self._session_id)))
            reply = self._reply(events, 1)
            if reply.outcome not in ("SUBSCRIBED", "ALREADY_SUBSCRIBED"):
                raise Failure("room: subscribe to %s answered %s %s" % (self._room, reply.outcome, reply.error))
            self._out("room: joined %s as a SYNC member (%s)" % (self._room, reply.outcome))

            # Another session's message: a plain unary Send, which any program could make.
            sent = call_unary(self._pool, self._api.room_send, rooms.RoomSendRequest(
                room=self._room, payload=b"hello from another session", priority=0,
                producer_id=self._session_id + "-send"), "room send", self._out).message_id
            self._out("room: sent %s to %s with a unary Send" % (sent, self._room))

            delivery = self._next(events, "delivery").delivery
            if delivery.message_id != sent or not delivery.ackable:
                raise Failure("room: expected ackable message %s, got %s (ackable=%s)"
                              % (sent, delivery.message_id, delivery.ackable))
            frames.put(rooms.SessionRequest(request_id=2, ack=rooms.RoomAck(room=self._room,
                                                                           message_id=delivery.message_id)))
            reply = self._reply(events, 2)
            if reply.outcome != "ACKED":
                raise Failure("room: ack of %s answered %s %s" % (delivery.message_id, reply.outcome, reply.error))
            self._out("room: received %s %r (ackable) and acked it: %s"
                      % (delivery.message_id, delivery.payload.decode(), reply.outcome))

            # Leaving: the server tells the session it was removed (ejected, reason UNSUBSCRIBED), then replies.
            frames.put(rooms.SessionRequest(request_id=3, unsubscribe=rooms.RoomUnsubscribe(room=self._room)))
            self._out("room: left %s (%s)" % (self._room, self._reply(events, 3, leaving=True).outcome))
            frames.put(None)  # half-close: the server ends the session after what it has buffered
            try:
                for _ in events:
                    pass
            except grpc.RpcError:
                pass  # the step is done; how the session ended no longer matters
            return delivery.message_id
        finally:
            frames.put(None)
            call.cancel()

    def _next(self, events, kind, leaving=False):
        """The next event, which must be of `kind`; a stream that ends raises its RpcError."""
        rooms = self._api.rooms
        for event in events:
            got = event.WhichOneof("event")
            if got == kind:
                return event
            if got == "ejected" and leaving and event.ejected.reason == rooms.UNSUBSCRIBED:
                continue
            if got == "ejected":
                raise Failure("room: ejected from %s (%s)"
                              % (event.ejected.room, rooms.EjectReason.Name(event.ejected.reason)))
            raise Failure("room: expected %s, got %s" % (kind, got))
        raise Failure("room: the server ended the session while waiting for %s" % kind)

    def _reply(self, events, request_id, leaving=False):
        reply = self._next(events, "reply", leaving).reply
        if reply.request_id != request_id:
            raise Failure("room: reply to request %d, expected %d" % (reply.request_id, request_id))
        return reply
