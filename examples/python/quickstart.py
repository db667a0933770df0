#!/usr/bin/env python3
"""Hourglass quick start in Python: what a user does first, against a real cluster.

  1. publish N messages, message i due (i+1) x --delay-ms later, each with a producer id, retrying
     on UNAVAILABLE and following the leader a refusal names; then retry one of them on purpose
     and check that the broker answers the first id and stores nothing;
  2. consume them as a durable consumer group, acking each; one ACK asks for confirmation and
     waits for the server's confirmation frame; a failed stream is re-opened (elsewhere);
  3. join a lock-step room as a SYNC member, receive a message sent there, ack it;
  4. exit 0 when every published message arrived at least once and none came back after its
     confirmed ACK; otherwise exit 1 with a one-line error (2: a package or file is missing).

Needs grpcio and protobuf (Debian: python3-grpcio python3-protobuf, run with /usr/bin/python3)
and protoc (Debian: protobuf-compiler). Message classes are generated from the .proto files at
start, into a temporary directory.

  /usr/bin/python3 examples/python/quickstart.py --servers 127.0.0.1:7070,127.0.0.1:7080,127.0.0.1:7090
"""

import argparse
import sys
import tempfile
import time
import uuid

try:
    import grpc  # noqa: F401 (the modules below need it)
    import google.protobuf  # noqa: F401
except ImportError as missing:
    print("error: cannot import %s: install Debian's python3-grpcio and python3-protobuf "
          "(apt-get install python3-grpcio python3-protobuf) and run this with /usr/bin/python3" % missing.name,
          file=sys.stderr)
    sys.exit(2)

from hourglass_api import Failure, ServerPool, SetupError, call_unary, default_proto_dir, load_api
from group_consumer import GroupConsumer
from room_member import RoomMember


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", required=True, help="host:port,host:port,... (client gRPC ports)")
    p.add_argument("--protos", default=default_proto_dir(),
                   help="directory holding hourglass/v1/*.proto (default: this checkout's client/src/main/proto)")
    p.add_argument("--messages", type=int, default=20, help="how many messages to publish (default 20)")
    p.add_argument("--delay-ms", type=int, default=200,
                   help="message i is due (i+1) x this after publishing (default 200)")
    p.add_argument("--confirm-at", type=int, default=5,
                   help="the ACK of the N-th message received asks for confirmation (default 5)")
    p.add_argument("--consume-seconds", type=float, default=5,
                   help="consume for at least this long, and until every message arrived (default 5)")
    p.add_argument("--timeout", type=float, default=90, help="give up the consume step after this (default 90)")
    p.add_argument("--group", default="quickstart", help="consumer group (default quickstart)")
    p.add_argument("--run-id", default=uuid.uuid4().hex[:12],
                   help="names the topic, room and producer ids of this run (default: random)")
    args = p.parse_args(argv)
    if args.messages < 1 or args.confirm_at < 1 or args.confirm_at > args.messages:
        p.error("--messages must be at least 1 and --confirm-at between 1 and --messages")
    return args


def publish(api, pool, args, topic, out):
    """Step 1. Returns {id: name} of what was published."""
    b = api.broker
    published = {}
    requests = []
    started = time.monotonic()
    for i in range(args.messages):
        name = "m-%d" % i
        # A producer id is a per-message idempotency key, unique for 15 minutes across the cluster,
        # not the producer's name: a retry with the same id is answered with the first message's id.
        request = b.PublishRequest(messages=[b.PublishMessage(
            topic=topic, payload=name.encode(), headers={"example": "python"},
            delay_ms=args.delay_ms * (i + 1), producer_id="%s-%d" % (args.run_id, i))])
        answer = call_unary(pool, api.publish, request, "publish", out).messages[0]
        published[answer.id] = name
        requests.append((request, answer.id))
        out("publish: %s id=%s due in %d ms, producer id %s"
            % (name, answer.id, answer.due_at_ms - answer.enqueued_at_ms, request.messages[0].producer_id))
    if len(published) != args.messages:
        raise Failure("publish: %d messages got only %d distinct ids" % (args.messages, len(published)))
    request, first_id = requests[0]
    again = call_unary(pool, api.publish, request, "publish", out).messages[0].id
    if again != first_id:
        raise Failure("publish: a retry with producer id %s stored a second message %s (first %s)"
                      % (request.messages[0].producer_id, again, first_id))
    out("publish: %d messages in %.1f s; a retry of m-0 with its producer id answered the same id: not stored twice"
        % (args.messages, time.monotonic() - started))
    return published


def main(argv):
    args = parse(argv)

    def out(line):
        print(line, flush=True)

    try:
        with tempfile.TemporaryDirectory(prefix="hourglass-py-") as generated:
            api = load_api(args.protos, generated)
            pool = ServerPool([s.strip() for s in args.servers.split(",") if s.strip()])
            try:
                topic = "quickstart-%s" % args.run_id
                out("run %s: topic %s, group %s, servers %s" % (args.run_id, topic, args.group, args.servers))
                published = publish(api, pool, args, topic, out)
                consumer = GroupConsumer(api, pool, topic, args.group, published, args.confirm_at, out)
                consumer.run(args.consume_seconds, args.timeout)
                RoomMember(api, pool, "quickstart-room-%s" % args.run_id, "quickstart-%s" % args.run_id,
                           out).run(timeout_seconds=30)
            finally:
                pool.close()
        missing = sorted(published[i] for i in set(published) - consumer.received)
        if missing:
            raise Failure("never received: " + ", ".join(missing))
        if consumer.violations:
            raise Failure("delivered again after their ACK was confirmed: " + ", ".join(consumer.violations))
        if not consumer.confirmed:
            raise Failure("no ACK was confirmed")
        out("result: OK published=%d received=%d deliveries=%d again=%d subscribe_calls=%d confirmed=%d "
            "after_confirmed_ack=0 room=acked"
            % (len(published), len(published), consumer.deliveries, consumer.again, consumer.streams,
               len(consumer.confirmed)))
        return 0
    except SetupError as e:
        print("error: %s" % e, file=sys.stderr, flush=True)
        return 2
    except Failure as e:
        print("error: %s" % e, file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr, flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
