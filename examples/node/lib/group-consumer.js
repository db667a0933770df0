'use strict';
// The consume step: a durable consumer group on a Subscribe stream, re-opened on another server
// (or the leader a refusal names) whenever the stream fails.
//
// The protocol (broker.proto, and the server's SubscribeSession):
//
// * The first frame is `init` (topic, group). The server answers `subscribed`, then pushes
//   deliveries. A named group is durable: it is registered through Raft before it receives
//   anything, and gets every message still pending, also those published before it first subscribed.
// * Each delivery is acknowledged with an `ack` frame carrying its `tag` ON THE STREAM THAT CARRIED
//   IT. A tag means nothing on another stream (the server answers AckReply{ok=false,
//   INVALID_ARGUMENT}); deliveries not acknowledged when a stream ends are redelivered, on the next
//   stream, with new tags.
// * A plain ACK is replicated with the next delete batch: if the leader dies first, the message
//   comes back (at least once). An ACK with `confirm` is answered with an AckReply once it is
//   committed; from then on the group never receives that message again.
// * Keep reading while a confirmation is outstanding: the AckReply comes on the same stream, behind
//   any deliveries the server wrote before it. A client that stops reading (pauses the stream) until
//   its confirmation arrives waits forever. Here every frame is handled as it comes.
// * gRPC flow control is the only back-pressure: the server writes only while the client's window
//   has room. Half-closing the stream (end()) ends it cleanly; ACKs written before are processed first.

const { Backoff, Failure, codeName, grpc, leaderHint, oneLine, reconnectable } = require('./api');

const { status } = grpc;

class GroupConsumer {
  constructor(pool, topic, group, published, confirmAt, out) {
    this.pool = pool;
    this.topic = topic;
    this.group = group;
    this.published = published; // Map id -> name, from the publish step
    this.confirmAt = confirmAt;
    this.out = out;
    this.received = new Set();
    this.confirmed = new Map(); // id -> name: ACKs the server confirmed
    this.deliveries = 0;
    this.again = 0; // deliveries of a message received before
    this.violations = []; // names delivered after their ACK was confirmed
    this.calls = 0;
    this.failedAttempts = 0; // since the last stream that was subscribed
  }

  /** Consumes until every published message arrived and at least minMs passed; gives up after timeoutMs. */
  async run(minMs, timeoutMs) {
    const started = Date.now();
    const backoff = new Backoff();
    for (;;) {
      const stream = { address: this.pool.current, subscribed: false, closing: false, confirmTag: null, confirmName: null };
      this.calls += 1;
      const { code, details, hint } = await this.consume(stream, started + minMs, started + timeoutMs);
      if (stream.closing && code === status.OK) {
        const got = [...this.published.keys()].filter((id) => this.received.has(id)).length;
        this.out(`consume: done: ${got}/${this.published.size} received in ${this.deliveries} deliveries `
          + `(${this.again} delivered again), ${this.confirmed.size} ACK confirmed, ${this.violations.length} `
          + `delivered after a confirmed ACK, ${this.calls} Subscribe calls`);
        return;
      }
      if (stream.subscribed) {
        backoff.reset();
        this.failedAttempts = 0;
      }
      if (Date.now() >= started + timeoutMs) {
        const missing = [...this.published.keys()].filter((id) => !this.received.has(id)).length;
        throw new Failure(`consume: ${missing} of ${this.published.size} messages still missing after `
          + `${timeoutMs / 1000} s (last: ${codeName(code)} on ${stream.address})`);
      }
      if (!reconnectable(code)) {
        throw new Failure(`consume: ${stream.address} refused the subscription: ${codeName(code)}: ${details}`);
      }
      const followed = this.pool.moveOff(stream.address, hint);
      if (followed) {
        this.out(`consume: ${stream.address} refused: ${codeName(code)} (${oneLine(details)}); `
          + `following hourglass-leader to ${this.pool.current}`);
      } else if (this.failedAttempts === 0) {
        this.out(`consume: stream on ${stream.address} ended: ${codeName(code)} (${oneLine(details)}); `
          + `reconnecting, next ${this.pool.current}`);
      }
      this.failedAttempts += 1;
      await backoff.wait(followed);
    }
  }

  /** Runs one stream to its end; resolves with its status code, details and leader hint. */
  consume(stream, finishAfter, giveUpAt) {
    return new Promise((resolve) => {
      const call = this.pool.client('Broker', stream.address).Subscribe();
      let ended = false;
      let watchdog = null;
      const end = (result) => {
        if (ended) {
          return;
        }
        ended = true;
        clearInterval(watchdog);
        if (stream.confirmName !== null) {
          this.out(`consume: the stream ended before the ACK of ${stream.confirmName} was confirmed: it may `
            + "come back; the next delivery's ACK will be confirmed instead");
          stream.confirmTag = stream.confirmName = null;
        }
        resolve(result);
      };
      // Half-closes the stream once the step is done; cancels it when its time is up.
      watchdog = setInterval(() => {
        if (!stream.closing && Date.now() >= finishAfter && this.done(stream)) {
          stream.closing = true;
          call.end();
        }
        if (Date.now() >= giveUpAt) {
          call.cancel();
        }
      }, 100);
      call.on('data', (frame) => {
        if (frame.frame === 'subscribed') {
          stream.subscribed = true;
          this.out(`consume: subscribed to ${this.topic} as group ${this.group} on ${stream.address} `
            + `(consumer ${frame.subscribed.consumer_id})`
            + (this.failedAttempts ? ` after ${this.failedAttempts} failed attempt(s)` : ''));
        } else if (frame.frame === 'delivery') {
          this.onDelivery(call, stream, frame.delivery);
        } else if (frame.frame === 'ack_reply') {
          this.onAckReply(stream, frame.ack_reply);
        }
      });
      call.on('error', (e) => end({ code: e.code, details: e.details, hint: leaderHint(e) }));
      call.on('status', (s) => end({ code: s.code, details: s.details || 'the server completed the stream', hint: null }));
      call.write({ init: { topic: this.topic, group: this.group } });
    });
  }

  onDelivery(call, stream, delivery) {
    const name = this.published.get(delivery.id) || '(not published by this run)';
    this.deliveries += 1;
    const seen = this.received.has(delivery.id);
    if (seen) {
      this.again += 1;
    }
    if (this.confirmed.has(delivery.id)) {
      this.violations.push(name);
      this.out(`consume: ERROR ${name} delivered again after its ACK was confirmed`);
    }
    this.received.add(delivery.id);
    const confirm = this.confirmed.size === 0 && stream.confirmTag === null && !stream.closing
      && this.received.size >= this.confirmAt;
    if (confirm) {
      stream.confirmTag = delivery.tag;
      stream.confirmName = name;
    }
    if (!stream.closing) { // after end() nothing more can be written; the server redelivers it
      call.write({ ack: { tag: delivery.tag, confirm } });
    }
    this.out(`consume: ${name} id=${delivery.id} attempt ${delivery.attempt} on ${stream.address}: `
      + `${confirm ? 'ACK with confirm' : 'ACK'}`
      + (seen ? ' (delivered again: its ACK had not been replicated, or it was not acked)' : ''));
  }

  onAckReply(stream, reply) {
    const mine = stream.confirmTag !== null && Buffer.compare(reply.tag, stream.confirmTag) === 0;
    if (mine) {
      const name = stream.confirmName;
      stream.confirmTag = stream.confirmName = null;
      if (reply.ok) {
        this.confirmed.set(Buffer.from(reply.tag).toString('hex'), name);
        this.out(`consume: ACK of ${name} confirmed by the server: group ${this.group} will never receive it again`);
      } else {
        this.out(`consume: ACK of ${name} not confirmed (code ${reply.code}: ${oneLine(reply.error)}); `
          + "the next delivery's ACK will be confirmed instead");
      }
    } else if (!reply.ok) {
      this.out(`consume: the server refused an ACK (code ${reply.code}: ${oneLine(reply.error)})`);
    }
  }

  done(stream) {
    return stream.subscribed && stream.confirmTag === null && this.confirmed.size > 0
      && [...this.published.keys()].every((id) => this.received.has(id));
  }
}

module.exports = { GroupConsumer };
