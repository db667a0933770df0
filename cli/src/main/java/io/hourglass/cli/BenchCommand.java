package io.hourglass.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.client.DeliveryContext;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.ReceivedMessage;
import io.hourglass.client.Subscription;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code hourglass bench}: measures a cluster the way the side-by-side peer harness measures NATS,
 * RabbitMQ and Redis, in one command. Progress goes to stderr; the result is one JSON record on
 * stdout ({@code metric, messages, seconds, msgPerSec, errors, maxGapMs} — the longest time without a
 * publish acknowledged — and {@code maxGapEndedAtMs}, when it ended, epoch ms; latencies as
 * HdrHistogram percentiles {@code p50Ms, p99Ms, p999Ms, maxMs}, and {@code early} for schedule;
 * with {@code --transfer-every}, the leadership moves meanwhile: {@link BenchTransfers}).
 *
 * <p>Each run uses a fresh topic ({@code bench-<epoch ms>} unless {@code --topic}) and the durable
 * group {@code bench}; payloads carry the send time, so the bench measures publish to deliver in
 * its own JVM's clock, from the <em>intended</em> send time (coordinated-omission safe).
 */
@Command(name = "bench", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Measure the cluster: publish (W publishes outstanding), consume (drain a prefilled "
                + "backlog, acking each), e2e (publish and consume at once), latency (paced at R msg/s, "
                + "publish to deliver from the intended send time), schedule (messages due over D, "
                + "lateness and early deliveries). One JSON record on stdout, progress on stderr."})
final class BenchCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String GROUP = "bench";
    private static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final long HIGHEST_MS = TimeUnit.MINUTES.toMillis(10);
    private static final String[] STAGES = {"toLeader", "inBroker", "toHandler"};

    enum Mode { publish, consume, e2e, latency, schedule }

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODE", description = "publish, consume, e2e, latency or schedule.")
    private Mode mode;

    @Option(names = "--count", paramLabel = "N",
            description = "Messages for publish and consume (default 50000) and schedule (default 20000).")
    private Integer count;

    @Option(names = "--duration", paramLabel = "D", converter = DurationConverter.class,
            description = "How long e2e and latency run, and over how long schedule spreads due times (default 10s).")
    private Duration duration = Duration.ofSeconds(10);

    @Option(names = "--lead", paramLabel = "L", converter = DurationConverter.class,
            description = "schedule: the first message is due L after the start (default 1s), so that every "
                    + "message is committed before it is due and lateness measures the dispatch, not the commit.")
    private Duration lead = Duration.ofSeconds(1);

    @Option(names = "--size", paramLabel = "BYTES", description = "Payload size (default 1024, at least 16).")
    private int size = 1024;

    @Option(names = "--window", paramLabel = "W", description = "Publishes outstanding at once (default 1000).")
    private int window = 1000;

    @Option(names = "--rate", paramLabel = "R", description = "Messages per second for latency (default 1000).")
    private int rate = 1000;

    @Option(names = "--topic", paramLabel = "T", description = "Topic (default bench-<epoch ms>).")
    private String topic;

    @Option(names = "--topics", paramLabel = "N", description = "Spread the messages over N topics, T-0 … T-(N-1), "
            + "one after the other, each consumed by its own subscription (default 1: the topic T itself). With "
            + "cluster.shards the topics spread over the shards and their leaders.")
    private int topics = 1;

    @Option(names = "--transfer-every", paramLabel = "D", converter = DurationConverter.class,
            description = "e2e and latency: move the leadership to the next member every D meanwhile, as a rolling "
                    + "restart does; maxGapMs and errors then say what a planned transfer costs (adds transfers, "
                    + "transferFailures, transferP50Ms, transferMaxMs).")
    private Duration transferEvery;

    @Override
    public Integer call() throws Exception {
        if (transferEvery != null && (transferEvery.isZero() || transferEvery.isNegative()
                || mode != Mode.e2e && mode != Mode.latency)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--transfer-every must be positive and goes with e2e or latency");
        }
        if (size < 16 || window < 1 || rate < 1 || (count != null && count < 1) || duration.isZero()
                || lead.isNegative() || topics < 1 || topics > 10_000) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--size must be at least 16, --window, --rate, --count and --duration positive, --lead not negative and "
                            + "--topics between 1 and 10000");
        }
        String t = topic != null ? topic : "bench-" + System.currentTimeMillis();
        Run run = new Run(t, spec.commandLine().getErr());
        Map<String, Object> record;
        try (HourglassClient client = root.openClient(b -> b)) {
            record = switch (mode) {
                case publish -> run.publish(client, count != null ? count : 50_000);
                case consume -> run.consume(client, count != null ? count : 50_000);
                case e2e -> run.e2e(client);
                case latency -> run.latency(client);
                case schedule -> run.schedule(client, count != null ? count : 20_000);
            };
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(JSON.writeValueAsString(record));
        out.flush();
        return ExitCodes.OK;
    }

    /** One measurement: its topic, counters and histogram. */
    private final class Run {
        private final String topic;
        /** The topics the messages go to, one after the other ({@code --topics}). */
        private final String[] names;
        private final AtomicLong nextName = new AtomicLong();
        private final PrintWriter err;
        private final AtomicLong acked = new AtomicLong();
        private final AtomicLong errors = new AtomicLong();
        private final AtomicLong delivered = new AtomicLong();
        /** By the message number in payload bytes 8-15. */
        private final FirstDeliveries firsts = new FirstDeliveries();
        private final AtomicLong early = new AtomicLong();
        private final AtomicLong lastAckNanos = new AtomicLong();
        /** Guards the longest gap between two acks and when it ended (epoch ms). */
        private final Object gapLock = new Object();
        private long maxGapNanos;
        private long maxGapEndMs;
        private final Histogram latency = new Histogram(HIGHEST_NANOS, 3);
        /**
         * Where a delivered message's time went, in ms, by the timestamps the server puts in each
         * delivery: intended send to the leader's stamp (client batching, transport, forwarding),
         * stamp to dispatch (Raft commit, apply, waiting for the dispatcher), dispatch to the
         * handler (the stream and the client). Meaningful when this machine's clock agrees with
         * the leader's (one machine, or NTP-synchronised to a few ms).
         */
        private final Histogram[] stages = {new Histogram(HIGHEST_MS, 3), new Histogram(HIGHEST_MS, 3),
            new Histogram(HIGHEST_MS, 3)};
        /** {@code System.currentTimeMillis() - System.nanoTime() / 1e6} at the start: nanos to wall ms. */
        private final long wallOffsetMs = System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime());

        Run(String topic, PrintWriter err) {
            this.topic = topic;
            this.names = new String[topics];
            for (int i = 0; i < topics; i++) {
                names[i] = topics == 1 ? topic : topic + "-" + i;
            }
            this.err = err;
        }

        /** One subscription per topic, closed together. */
        private AutoCloseable subscribeAll(HourglassClient client, io.hourglass.client.DeliveryHandler handler,
                                           List<Subscription> opened) {
            for (String name : names) {
                opened.add(client.subscribe(name, GROUP, handler));
            }
            return () -> opened.forEach(Subscription::close);
        }

        Map<String, Object> publish(HourglassClient client, int n) throws InterruptedException {
            long start = System.nanoTime();
            sendWindowed(client, n, Duration.ZERO, start);
            return result("publish", n, System.nanoTime() - start, false);
        }

        Map<String, Object> consume(HourglassClient client, int n) throws Exception {
            progress("prefilling " + n + " messages on " + topic);
            // No group yet: the backlog stays pending for the group that subscribes next.
            sendWindowed(client, n, Duration.ZERO, System.nanoTime());
            acked.set(0);
            long start = System.nanoTime();
            List<Subscription> subs = new java.util.ArrayList<>();
            try (AutoCloseable all = subscribeAll(client, this::count, subs)) {
                awaitDelivered(n, start, Duration.ofMinutes(5));
            }
            return result("consume", delivered.get(), System.nanoTime() - start, false);
        }

        Map<String, Object> e2e(HourglassClient client) throws Exception {
            return timed(client, "e2e", 0);
        }

        Map<String, Object> latency(HourglassClient client) throws Exception {
            return timed(client, "latency", rate);
        }

        /**
         * Publishes for {@link #duration} (paced at {@code perSecond}, or as fast as the window allows
         * when 0) while consuming, moving the leadership meanwhile with {@code --transfer-every}.
         */
        private Map<String, Object> timed(HourglassClient client, String metric, int perSecond) throws Exception {
            long start;
            long sent;
            List<Subscription> subs = new java.util.ArrayList<>();
            BenchTransfers moves;
            try (AutoCloseable all = subscribeAll(client, this::record, subs)) {
                start = awaitSubscribed(subs);
                try (BenchTransfers m = BenchTransfers.start(client, transferEvery, err, start)) {
                    sent = sendFor(client, start, perSecond);
                    moves = m;
                }
                awaitDelivered(sent, start, Duration.ofSeconds(30));
            }
            Map<String, Object> record = result(metric, delivered.get(), System.nanoTime() - start, true);
            if (moves != null) {
                moves.putInto(record);
            }
            return record;
        }

        Map<String, Object> schedule(HourglassClient client, int n) throws Exception {
            long start;
            List<Subscription> subs = new java.util.ArrayList<>();
            try (AutoCloseable all = subscribeAll(client, this::lateness, subs)) {
                start = awaitSubscribed(subs);
                sendWindowed(client, n, duration, start);
                awaitDelivered(n, start, lead.plus(duration).plusSeconds(60));
            }
            Map<String, Object> r = result("schedule", delivered.get(), System.nanoTime() - start, true);
            r.put("early", early.get());
            return r;
        }

        /**
         * Publishes {@code n} messages keeping {@link #window} outstanding; with {@code spread}
         * non-zero, message i is due {@code lead + spread * i / n} after the start (at once if
         * publishing fell that far behind).
         */
        private void sendWindowed(HourglassClient client, int n, Duration spread, long start) throws InterruptedException {
            Semaphore slots = new Semaphore(window);
            long nextProgress = start + TimeUnit.SECONDS.toNanos(1);
            for (int i = 0; i < n; i++) {
                slots.acquire();
                Duration delay = Duration.ZERO;
                if (!spread.isZero()) {
                    long dueNanos = start + lead.toNanos() + spread.toNanos() / n * i;
                    delay = Duration.ofNanos(Math.max(0, dueNanos - System.nanoTime()));
                }
                publish(client, System.nanoTime(), delay, slots);
                nextProgress = maybeProgress(start, nextProgress, "published " + i + "/" + n);
            }
            slots.acquire(window);
            slots.release(window);
        }

        /** Publishes for {@link #duration}: paced at {@code perSecond}, or as fast as the window allows when 0. */
        private long sendFor(HourglassClient client, long start, int perSecond) throws InterruptedException {
            Semaphore slots = new Semaphore(window);
            long end = start + duration.toNanos();
            long interval = perSecond == 0 ? 0 : 1_000_000_000L / perSecond;
            long nextProgress = start + TimeUnit.SECONDS.toNanos(1);
            long sent = 0;
            for (long intended = start; intended < end; intended += interval) {
                if (interval > 0) {
                    long wait;
                    while ((wait = intended - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                } else {
                    intended = System.nanoTime();
                    if (intended >= end) {
                        break;
                    }
                }
                slots.acquire();
                publish(client, intended, Duration.ZERO, slots);
                sent++;
                nextProgress = maybeProgress(start, nextProgress, "published " + sent + ", delivered " + delivered.get());
            }
            slots.acquire(window);
            slots.release(window);
            return sent;
        }

        private void publish(HourglassClient client, long intendedNanos, Duration delay, Semaphore slots) {
            byte[] payload = new byte[size];
            long seq = nextName.getAndIncrement();
            ByteBuffer.wrap(payload).putLong(intendedNanos).putLong(seq); // size is at least 16
            String name = names[(int) (seq % names.length)];
            client.publishAsync(Message.builder(name).payload(payload).delay(delay).build()).whenComplete((r, e) -> {
                slots.release();
                if (e != null) {
                    errors.incrementAndGet();
                    return;
                }
                acked.incrementAndGet();
                long now = System.nanoTime();
                long last = lastAckNanos.getAndSet(now);
                if (last != 0) {
                    synchronized (gapLock) {
                        if (now - last > maxGapNanos) {
                            maxGapNanos = now - last;
                            maxGapEndMs = System.currentTimeMillis();
                        }
                    }
                }
            });
        }

        private void count(ReceivedMessage m, DeliveryContext c) {
            c.ack();
            if (first(m)) {
                delivered.incrementAndGet();
            }
        }

        /** Whether this is the message's first delivery (see {@link FirstDeliveries}). */
        private boolean first(ReceivedMessage m) {
            return firsts.first(ByteBuffer.wrap(m.payload()).getLong(8));
        }

        /** Publish to deliver, from the intended send time in the payload. */
        private void record(ReceivedMessage m, DeliveryContext c) {
            c.ack();
            if (!first(m)) {
                return;
            }
            long sentAt = ByteBuffer.wrap(m.payload()).getLong();
            long now = System.nanoTime();
            long sentWallMs = wallOffsetMs + TimeUnit.NANOSECONDS.toMillis(sentAt);
            long nowWallMs = wallOffsetMs + TimeUnit.NANOSECONDS.toMillis(now);
            synchronized (latency) {
                latency.recordValue(Math.min(HIGHEST_NANOS, Math.max(0, now - sentAt)));
                recordStage(0, m.enqueuedAtMs() - sentWallMs);
                recordStage(1, m.deliveredAtMs() - m.enqueuedAtMs());
                recordStage(2, nowWallMs - m.deliveredAtMs());
            }
            delivered.incrementAndGet();
        }

        private void recordStage(int stage, long ms) {
            stages[stage].recordValue(Math.min(HIGHEST_MS, Math.max(0, ms)));
        }

        /** Delivered minus due, as the server stamped both; a delivery before its due time is early. */
        private void lateness(ReceivedMessage m, DeliveryContext c) {
            c.ack();
            if (!first(m)) {
                return;
            }
            long lateMs = m.deliveredAtMs() - m.dueAtMs();
            if (lateMs < 0) {
                early.incrementAndGet();
            }
            synchronized (latency) {
                latency.recordValue(Math.min(HIGHEST_NANOS, TimeUnit.MILLISECONDS.toNanos(Math.max(0, lateMs))));
            }
            delivered.incrementAndGet();
        }

        /**
         * Waits (up to 30 s) until the server accepted the subscription, so that the first messages
         * do not count the subscription's set-up (finding the leader) as latency; returns the start.
         */
        private long awaitSubscribed(List<Subscription> subs) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (Subscription s : subs) {
                while (!s.isSubscribed() && !s.terminated().isDone() && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                }
            }
            long waiting = subs.stream().filter(s -> !s.isSubscribed()).count();
            if (waiting > 0) {
                progress(waiting + " of " + subs.size() + " subscriptions are not accepted yet; measuring anyway");
            }
            return System.nanoTime();
        }

        private void awaitDelivered(long n, long start, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            long nextProgress = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (delivered.get() < n && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                nextProgress = maybeProgress(start, nextProgress, "delivered " + delivered.get() + "/" + n);
            }
            if (delivered.get() < n) {
                progress("only " + delivered.get() + " of " + n + " delivered within " + timeout.toSeconds() + " s");
            }
        }

        private long maybeProgress(long start, long nextProgress, String what) {
            long now = System.nanoTime();
            if (now < nextProgress) {
                return nextProgress;
            }
            progress(String.format(Locale.ROOT, "%.1f s: %s", (now - start) / 1e9, what));
            return now + TimeUnit.SECONDS.toNanos(1);
        }

        private void progress(String line) {
            err.println(line);
            err.flush();
        }

        private Map<String, Object> result(String metric, long messages, long nanos, boolean latencies) {
            double seconds = nanos / 1e9;
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("metric", metric);
            r.put("topic", topic);
            r.put("topics", topics);
            r.put("messages", messages);
            r.put("seconds", Math.round(seconds * 1000) / 1000.0);
            r.put("msgPerSec", Math.round(messages / Math.max(seconds, 1e-9)));
            r.put("errors", errors.get());
            r.put("duplicates", firsts.duplicates());
            synchronized (gapLock) {
                r.put("maxGapMs", TimeUnit.NANOSECONDS.toMillis(maxGapNanos));
                if (maxGapEndMs > 0) {
                    r.put("maxGapEndedAtMs", maxGapEndMs);
                }
            }
            if (latencies) {
                synchronized (latency) {
                    putPercentiles(r);
                }
            }
            return r;
        }

        private void putPercentiles(Map<String, Object> r) {
            {
                r.put("p50Ms", ms(latency.getValueAtPercentile(50)));
                r.put("p99Ms", ms(latency.getValueAtPercentile(99)));
                r.put("p999Ms", ms(latency.getValueAtPercentile(99.9)));
                r.put("maxMs", ms(latency.getMaxValue()));
            }
            if (stages[0].getTotalCount() > 0) {
                for (double pct : new double[] {50, 99}) {
                    Map<String, Long> at = new LinkedHashMap<>();
                    for (int i = 0; i < STAGES.length; i++) {
                        at.put(STAGES[i], stages[i].getValueAtPercentile(pct));
                    }
                    r.put("stagesP" + (int) pct + "Ms", at);
                }
            }
        }

        private double ms(long nanos) {
            return Math.round(nanos / 1_000.0) / 1_000.0;
        }
    }
}
