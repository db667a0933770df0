#!/usr/bin/env node
'use strict';
// Hourglass quick start in Node.js: what a user does first, against a real cluster.
//
//   1. publish N messages, message i due (i+1) x --delay-ms later, each with a producer id,
//      retrying on UNAVAILABLE and following the leader a refusal names; then retry one of them on
//      purpose and check that the broker answers the first id and stores nothing;
//   2. consume them as a durable consumer group, acking each; one ACK asks for confirmation and
//      waits for the server's confirmation frame; a failed stream is re-opened (elsewhere);
//   3. join a lock-step room as a SYNC member, receive a message sent there, ack it;
//   4. exit 0 when every published message arrived at least once and none came back after its
//      confirmed ACK; otherwise exit 1 with a one-line error (2: a package or file is missing).
//
// Needs @grpc/grpc-js and @grpc/proto-loader: `npm ci` in this directory installs the versions
// pinned in package-lock.json. The .proto files are loaded at start.
//
//   node examples/node/quickstart.js --servers 127.0.0.1:7070,127.0.0.1:7080,127.0.0.1:7090

const crypto = require('crypto');
const path = require('path');
const { parseArgs } = require('util');

const { Failure, SetupError } = require('./lib/errors');

const USAGE = `usage: node ${path.basename(__filename)} --servers HOST:PORT[,HOST:PORT...] [options]
  --protos DIR            directory holding hourglass/v1/*.proto (default: this checkout's client/src/main/proto)
  --messages N            how many messages to publish (default 20)
  --delay-ms MS           message i is due (i+1) x this after publishing (default 200)
  --confirm-at N          the ACK of the N-th message received asks for confirmation (default 5)
  --consume-seconds S     consume for at least this long, and until every message arrived (default 5)
  --timeout S             give up the consume step after this (default 90)
  --group NAME            consumer group (default quickstart)
  --run-id ID             names the topic, room and producer ids of this run (default: random)`;

function parse(argv) {
  let values;
  try {
    ({ values } = parseArgs({
    args: argv,
    options: {
      servers: { type: 'string' },
      protos: { type: 'string' },
      messages: { type: 'string', default: '20' },
      'delay-ms': { type: 'string', default: '200' },
      'confirm-at': { type: 'string', default: '5' },
      'consume-seconds': { type: 'string', default: '5' },
      timeout: { type: 'string', default: '90' },
      group: { type: 'string', default: 'quickstart' },
      'run-id': { type: 'string', default: crypto.randomBytes(6).toString('hex') },
      help: { type: 'boolean', short: 'h' },
    },
    }));
  } catch (e) {
    throw new SetupError(`${e.message} (--help for usage)`);
  }
  const args = {
    servers: (values.servers || '').split(',').map((s) => s.trim()).filter((s) => s),
    protos: values.protos,
    messages: Number(values.messages),
    delayMs: Number(values['delay-ms']),
    confirmAt: Number(values['confirm-at']),
    consumeMs: Number(values['consume-seconds']) * 1000,
    timeoutMs: Number(values.timeout) * 1000,
    group: values.group,
    runId: values['run-id'],
  };
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const bad = args.servers.length === 0 || !(args.messages >= 1) || !(args.confirmAt >= 1)
    || args.confirmAt > args.messages || !(args.delayMs >= 0) || !(args.consumeMs >= 0) || !(args.timeoutMs > 0);
  if (bad) {
    throw new SetupError(`--servers is required; --messages >= 1; --confirm-at between 1 and --messages (--help for usage)`);
  }
  return args;
}

/** Step 1. Returns Map id -> name of what was published. */
async function publish(api, pool, args, topic, out) {
  const published = new Map();
  const requests = [];
  const started = Date.now();
  for (let i = 0; i < args.messages; i += 1) {
    const name = `m-${i}`;
    // A producer id is a per-message idempotency key, unique for 15 minutes across the cluster, not
    // the producer's name: a retry with the same id is answered with the first message's id.
    const request = {
      messages: [{
        topic, payload: Buffer.from(name), headers: { example: 'node' },
        delay_ms: args.delayMs * (i + 1), producer_id: `${args.runId}-${i}`,
      }],
    };
    const answer = (await api.callUnary(pool, 'Broker', 'Publish', request, 'publish', out)).messages[0];
    published.set(answer.id, name);
    requests.push([request, answer.id]);
    out(`publish: ${name} id=${answer.id} due in ${answer.due_at_ms - answer.enqueued_at_ms} ms, `
      + `producer id ${request.messages[0].producer_id}`);
  }
  if (published.size !== args.messages) {
    throw new Failure(`publish: ${args.messages} messages got only ${published.size} distinct ids`);
  }
  const [request, firstId] = requests[0];
  const again = (await api.callUnary(pool, 'Broker', 'Publish', request, 'publish', out)).messages[0].id;
  if (again !== firstId) {
    throw new Failure(`publish: a retry with producer id ${request.messages[0].producer_id} stored a second `
      + `message ${again} (first ${firstId})`);
  }
  out(`publish: ${args.messages} messages in ${((Date.now() - started) / 1000).toFixed(1)} s; a retry of m-0 `
    + 'with its producer id answered the same id: not stored twice');
  return published;
}

async function main(argv) {
  const out = (line) => process.stdout.write(`${line}\n`);
  let api;
  let pool;
  try {
    const args = parse(argv);
    api = require('./lib/api');
    const { GroupConsumer } = require('./lib/group-consumer');
    const { RoomMember } = require('./lib/room-member');
    pool = new api.ServerPool(api.loadApi(args.protos || api.defaultProtoDir()), args.servers);
    const topic = `quickstart-${args.runId}`;
    out(`run ${args.runId}: topic ${topic}, group ${args.group}, servers ${args.servers.join(',')}`);
    const published = await publish(api, pool, args, topic, out);
    const consumer = new GroupConsumer(pool, topic, args.group, published, args.confirmAt, out);
    await consumer.run(args.consumeMs, args.timeoutMs);
    await new RoomMember(pool, `quickstart-room-${args.runId}`, `quickstart-${args.runId}`, out).run(30000);

    const missing = [...published.keys()].filter((id) => !consumer.received.has(id)).map((id) => published.get(id));
    if (missing.length > 0) {
      throw new Failure(`never received: ${missing.join(', ')}`);
    }
    if (consumer.violations.length > 0) {
      throw new Failure(`delivered again after their ACK was confirmed: ${consumer.violations.join(', ')}`);
    }
    if (consumer.confirmed.size === 0) {
      throw new Failure('no ACK was confirmed');
    }
    out(`result: OK published=${published.size} received=${published.size} deliveries=${consumer.deliveries} `
      + `again=${consumer.again} subscribe_calls=${consumer.calls} confirmed=${consumer.confirmed.size} `
      + 'after_confirmed_ack=0 room=acked');
    return 0;
  } catch (e) {
    if (e instanceof SetupError || e instanceof Failure) {
      process.stderr.write(`error: ${e.message}\n`);
      return e instanceof SetupError ? 2 : 1;
    }
    process.stderr.write(`error: unexpected: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}\n`);
    return 1;
  } finally {
    if (pool) {
      pool.close();
    }
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
