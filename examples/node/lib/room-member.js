'use strict';
// The room step: join a lock-step room as a SYNC member, receive a message, ack it.
//
// The protocol (rooms.proto, ROOMS.md, and the server's RoomSession):
//
// * One Rooms.Session stream is one client session. Its first frame is `open`; the server answers
//   `opened` with a broker-issued client id, which changes with every stream.
// * Every later frame carries a `request_id` that the server echoes in its `reply`, whose `outcome`
//   names what happened (SUBSCRIBED, ACKED, NOT_IN_FLIGHT, ...). A refused request leaves the
//   stream open.
// * `subscribe` carries a `session_id` of the client's own, the same on every subscribe of the
//   session, resubscribes on a new stream included: a new leader uses it to know when the members
//   that held the in-flight message are back. After a reconnect, `held_message_id` names the
//   ackable message the client still holds.
// * Subscribe before anything is sent: a room without SYNC members keeps no backlog, and a newcomer
//   never receives the message already in flight.
// * A delivery with `ackable` must be acked (`ack` with room and message id); until every SYNC
//   member has acked it, the room releases nothing else. A SYNC member must also send something
//   (`ping`, an ack, a subscribe) within its heartbeat timeout (`opened.client_timeout_ms`) or it is
//   evicted; ping every third of it. This step is shorter than the default 30 s.
// * Only the leader runs rooms: a follower ends the session, and refuses Send, with UNAVAILABLE and
//   the `hourglass-leader` trailer. Sends carry a producer id, so a retried send is not enqueued twice.

const { Backoff, Failure, callUnary, codeName, grpc, leaderHint, oneLine, reconnectable } = require('./api');

const { status } = grpc;

/** The events of one stream, awaited one at a time; the stream's error rejects the waiting (and any later) next(). */
class Events {
  constructor(call) {
    this.queue = [];
    this.waiters = [];
    this.error = null;
    this.finished = false;
    call.on('data', (event) => this.push({ event }));
    call.on('error', (error) => this.push({ error }));
    call.on('status', (s) => {
      if (s.code === status.OK) {
        this.push({ end: true });
      }
    });
  }

  push(item) {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter(item);
    } else {
      this.queue.push(item);
    }
  }

  async next(what) {
    const item = this.queue.length > 0 ? this.queue.shift()
      : await new Promise((resolve) => this.waiters.push(resolve));
    if (item.error) {
      this.queue.unshift(item); // a stream error stays the answer
      throw item.error;
    }
    if (item.end) {
      this.queue.unshift(item);
      throw new Failure(`room: the server ended the session while waiting for ${what}`);
    }
    return item.event;
  }
}

class RoomMember {
  constructor(pool, room, sessionId, out) {
    this.pool = pool;
    this.room = room;
    this.sessionId = sessionId;
    this.out = out;
  }

  /** Joins, sends, receives and acks on one session; a session that fails is opened anew. */
  async run(timeoutMs) {
    const backoff = new Backoff();
    for (;;) {
      const address = this.pool.current;
      try {
        return await this.session(address, timeoutMs);
      } catch (e) {
        if (e instanceof Failure || e.code === undefined) {
          throw e;
        }
        if (!reconnectable(e.code) || e.code === status.DEADLINE_EXCEEDED) {
          throw new Failure(`room: session on ${address} failed: ${codeName(e.code)}: ${e.details}`);
        }
        const followed = this.pool.moveOff(address, leaderHint(e));
        this.out(`room: session on ${address} ended: ${codeName(e.code)} (${oneLine(e.details)}); `
          + `${followed ? 'following hourglass-leader to ' : 'trying '}${this.pool.current}`);
        await backoff.wait(followed);
      }
    }
  }

  async session(address, timeoutMs) {
    const call = this.pool.client('Rooms', address).Session({ deadline: Date.now() + timeoutMs });
    const events = new Events(call);
    try {
      call.write({ open: { client_timeout_ms: 0 } });
      const { opened } = await this.expect(events, 'opened');
      this.out(`room: session opened on ${address} as client ${opened.client_id} `
        + `(heartbeat timeout ${opened.client_timeout_ms} ms)`);

      call.write({ request_id: 1, subscribe: { room: this.room, mode: 'SYNC', session_id: this.sessionId } });
      let reply = await this.reply(events, 1);
      if (reply.outcome !== 'SUBSCRIBED' && reply.outcome !== 'ALREADY_SUBSCRIBED') {
        throw new Failure(`room: subscribe to ${this.room} answered ${reply.outcome} ${reply.error}`);
      }
      this.out(`room: joined ${this.room} as a SYNC member (${reply.outcome})`);

      // Another session's message: a plain unary Send, which any program could make.
      const sent = (await callUnary(this.pool, 'Rooms', 'Send', {
        room: this.room, payload: Buffer.from('hello from another session'), priority: 0,
        producer_id: `${this.sessionId}-send`,
      }, 'room send', this.out)).message_id;
      this.out(`room: sent ${sent} to ${this.room} with a unary Send`);

      const { delivery } = await this.expect(events, 'delivery');
      if (delivery.message_id !== sent || !delivery.ackable) {
        throw new Failure(`room: expected ackable message ${sent}, got ${delivery.message_id} (ackable=${delivery.ackable})`);
      }
      call.write({ request_id: 2, ack: { room: this.room, message_id: delivery.message_id } });
      reply = await this.reply(events, 2);
      if (reply.outcome !== 'ACKED') {
        throw new Failure(`room: ack of ${delivery.message_id} answered ${reply.outcome} ${reply.error}`);
      }
      this.out(`room: received ${delivery.message_id} '${Buffer.from(delivery.payload).toString()}' `
        + `(ackable) and acked it: ${reply.outcome}`);

      // Leaving: the server tells the session it was removed (ejected, reason UNSUBSCRIBED), then replies.
      call.write({ request_id: 3, unsubscribe: { room: this.room } });
      this.out(`room: left ${this.room} (${(await this.reply(events, 3, true)).outcome})`);
      const closed = new Promise((resolve) => call.on('status', resolve));
      call.end(); // half-close: the server ends the session after what it has buffered
      await closed;
      return delivery.message_id;
    } finally {
      call.cancel();
    }
  }

  /** The next event, which must be of `kind`. */
  async expect(events, kind, leaving = false) {
    for (;;) {
      const event = await events.next(kind);
      if (event.event === kind) {
        return event;
      }
      if (event.event === 'ejected' && leaving && event.ejected.reason === 'UNSUBSCRIBED') {
        continue;
      }
      if (event.event === 'ejected') {
        throw new Failure(`room: ejected from ${event.ejected.room} (${event.ejected.reason})`);
      }
      throw new Failure(`room: expected ${kind}, got ${event.event}`);
    }
  }

  async reply(events, requestId, leaving = false) {
    const { reply } = await this.expect(events, 'reply', leaving);
    if (Number(reply.request_id) !== requestId) {
      throw new Failure(`room: reply to request ${reply.request_id}, expected ${requestId}`);
    }
    return reply;
  }
}

module.exports = { RoomMember };
