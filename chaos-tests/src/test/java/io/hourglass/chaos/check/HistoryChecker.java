package io.hourglass.chaos.check;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Reads a chaos history, names every violation and measures each fault's availability figures; a
 * pure function of the events. The rules, the figures and the format are in the package
 * documentation. Runs on its own:
 * {@code java ... io.hourglass.chaos.check.HistoryChecker history.jsonl [--tolerance=ms]
 * [--in-flight-timeout=ms]} prints the summary table and exits 1 on any violation.
 */
public final class HistoryChecker {
    public static final long DEFAULT_CLOCK_TOLERANCE_MS = 200;
    public static final long DEFAULT_IN_FLIGHT_TIMEOUT_MS = 30_000;

    private final Long clockToleranceMs;
    private final Long inFlightTimeoutMs;

    /** Settings from the history's {@code config} line, else the defaults. */
    public HistoryChecker() {
        this(null, null);
    }

    private HistoryChecker(Long clockToleranceMs, Long inFlightTimeoutMs) {
        this.clockToleranceMs = clockToleranceMs;
        this.inFlightTimeoutMs = inFlightTimeoutMs;
    }

    /** A checker with this clock tolerance, overriding the history's. */
    public HistoryChecker withClockTolerance(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("clock tolerance must be >= 0: " + ms);
        }
        return new HistoryChecker(ms, inFlightTimeoutMs);
    }

    /** A checker with this in-flight timeout, overriding the history's. */
    public HistoryChecker withInFlightTimeout(long ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException("in-flight timeout must be > 0: " + ms);
        }
        return new HistoryChecker(clockToleranceMs, ms);
    }

    public CheckReport checkLines(List<String> lines) {
        return check(HistoryEvent.parse(lines));
    }

    public CheckReport checkFile(Path file) throws IOException {
        return checkLines(Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    public CheckReport check(List<HistoryEvent> history) {
        List<HistoryEvent> events = new ArrayList<>(history);
        // Stable: equal times keep file order.
        events.sort(Comparator.comparingLong(HistoryEvent::t).thenComparingInt(HistoryEvent::line));

        long tolerance = clockToleranceMs != null ? clockToleranceMs : DEFAULT_CLOCK_TOLERANCE_MS;
        long timeout = inFlightTimeoutMs != null ? inFlightTimeoutMs : DEFAULT_IN_FLIGHT_TIMEOUT_MS;
        for (HistoryEvent e : events) {
            if (e.type().equals("config")) {
                if (clockToleranceMs == null && e.has("clockToleranceMs")) {
                    tolerance = e.num("clockToleranceMs");
                }
                if (inFlightTimeoutMs == null && e.has("inFlightTimeoutMs")) {
                    timeout = e.num("inFlightTimeoutMs");
                }
            }
        }
        CheckReport report = new CheckReport(tolerance, timeout);
        for (HistoryEvent e : events) {
            if (e.type().equals("config")) {
                continue;
            }
            report.operation(e.type());
            if (e.type().equals("fault")) {
                report.fault(faultKind(e));
            }
        }
        new Run(events, tolerance, timeout, report).check();
        return report;
    }

    private static String faultKind(HistoryEvent fault) {
        return fault.str("kind").isEmpty() ? "(unnamed)" : fault.str("kind");
    }

    /** When a fault was injected: its {@code start}, else its {@code t}. */
    private static long faultStart(HistoryEvent fault) {
        return fault.has("start") ? fault.num("start") : fault.t();
    }

    /** When a publish (or cancel) call was made: its {@code start}, else (older histories) its {@code t}. */
    static long callStart(HistoryEvent publish) {
        return publish.has("start") ? publish.num("start") : publish.t();
    }

    /** One check of one history. */
    private static final class Run {
        private final List<HistoryEvent> events;
        private final long tol;
        private final long timeout;
        private final CheckReport report;
        private final List<HistoryEvent> faults = new ArrayList<>();
        private final Map<String, HistoryEvent> publishes = new HashMap<>();
        private final SchedulingRules scheduling;

        Run(List<HistoryEvent> events, long tol, long timeout, CheckReport report) {
            this.events = events;
            this.tol = tol;
            this.timeout = timeout;
            this.report = report;
            for (HistoryEvent e : events) {
                if (e.type().equals("fault")) {
                    faults.add(e);
                } else if (e.type().equals("publish")) {
                    // An ok record wins over a failed attempt with the same id.
                    HistoryEvent prior = publishes.get(e.str("id"));
                    if (prior == null || (!prior.flag("ok") && e.flag("ok"))) {
                        publishes.put(e.str("id"), e);
                    }
                }
            }
            scheduling = new SchedulingRules(events, tol, report);
        }

        void check() {
            checkTiming();
            checkAfterConfirm();
            scheduling.check();
            checkLost();
            checkDoubleHold();
            checkRooms();
            checkDivergence();
            measureAvailability();
        }

        private static String receiver(HistoryEvent e) {
            return e.str("group").isEmpty() ? "*" + e.str("consumer") : e.str("group");
        }

        private void checkTiming() {
            for (HistoryEvent d : of("deliver")) {
                HistoryEvent p = publishes.get(d.str("id"));
                if (p == null) {
                    continue;
                }
                long due = p.has("dueAt") ? p.num("dueAt") : p.t();
                if (d.t() < due - tol) {
                    report.violation(ViolationClass.EARLY, String.format("%s to %s by %s at %d, due %d (%d ms early)",
                            d.str("id"), receiver(d), d.str("consumer"), d.t(), due, due - d.t()));
                }
                // By when the server sent it, where recorded: a copy sent before expiry and slowed on the
                // way (slow-net) is on time.
                long expires = p.num("expiresAt");
                long sent = SchedulingRules.deliveryStart(d);
                if (expires > 0 && sent > expires + tol) {
                    report.violation(ViolationClass.EXPIRED, String.format("%s to %s by %s at %d (sent %d), expired %d",
                            d.str("id"), receiver(d), d.str("consumer"), d.t(), sent, expires));
                }
            }
        }

        private void checkAfterConfirm() {
            Map<String, Long> confirmed = new HashMap<>();
            for (HistoryEvent c : of("confirm")) {
                confirmed.merge(c.str("group") + "\u0000" + c.str("id"), c.t(), Math::min);
            }
            for (HistoryEvent d : of("deliver")) {
                if (d.str("group").isEmpty()) {
                    continue;
                }
                Long at = confirmed.get(d.str("group") + "\u0000" + d.str("id"));
                if (at != null && d.t() > at + tol) {
                    report.violation(ViolationClass.AFTER_CONFIRM, String.format(
                            "%s to group %s (consumer %s) at %d, confirmed at %d",
                            d.str("id"), d.str("group"), d.str("consumer"), d.t(), at));
                }
            }
        }

        private void checkLost() {
            long end = events.stream().mapToLong(HistoryEvent::t).max().orElse(0);
            Map<String, Map<String, Long>> receivers = new HashMap<>();
            Set<String> delivered = new HashSet<>();
            for (HistoryEvent e : events) {
                if (e.type().equals("subscribe")) {
                    receivers.computeIfAbsent(e.str("topic"), k -> new TreeMap<>())
                            .merge(receiver(e), e.t(), Math::min);
                }
            }
            for (HistoryEvent d : of("deliver")) {
                delivered.add(receiver(d) + "\u0000" + d.str("id"));
                String topic = d.has("topic") ? d.str("topic")
                        : publishes.containsKey(d.str("id")) ? publishes.get(d.str("id")).str("topic") : "";
                receivers.computeIfAbsent(topic, k -> new TreeMap<>()).putIfAbsent(receiver(d), Long.MIN_VALUE);
            }
            for (HistoryEvent p : of("publish")) {
                if (!p.flag("ok") || p.num("expiresAt") > 0 || scheduling.mayHaveBeenRemoved(p)) {
                    continue; // may have expired, been cancelled or replaced: rightly never delivered
                }
                long due = p.has("dueAt") ? p.num("dueAt") : p.t();
                if (due > end - tol) {
                    continue;
                }
                for (Map.Entry<String, Long> r : receivers.getOrDefault(p.str("topic"), Map.of()).entrySet()) {
                    if (r.getKey().startsWith("*")) {
                        // A universal consumer is not durable (README): it gets what is pending while
                        // it is connected, so a message every durable group acknowledged while it was
                        // reconnecting is not lost to it. Loss is judged per durable group.
                        continue;
                    }
                    boolean expected = r.getValue() == Long.MIN_VALUE || r.getValue() + tol <= p.t();
                    if (expected && !delivered.contains(r.getKey() + "\u0000" + p.str("id"))) {
                        report.violation(ViolationClass.LOST, String.format(
                                "%s (topic %s, published %d, due %d) never reached %s",
                                p.str("id"), p.str("topic"), p.t(), due, r.getKey()));
                    }
                }
            }
        }

        /** Who settled: the {@code consumer} field, else the recording process. */
        private static String settledBy(HistoryEvent s) {
            return s.str("consumer").isEmpty() ? s.process() : s.str("consumer");
        }

        private void checkDoubleHold() {
            Map<String, List<HistoryEvent>> byKey = new LinkedHashMap<>();
            Map<String, List<HistoryEvent>> settled = new HashMap<>();
            Map<String, List<HistoryEvent>> disconnects = new HashMap<>();
            for (HistoryEvent e : events) {
                switch (e.type()) {
                    case "deliver" -> {
                        if (!e.str("group").isEmpty()) {
                            byKey.computeIfAbsent(e.str("group") + "\u0000" + e.str("id"), k -> new ArrayList<>()).add(e);
                        }
                    }
                    case "ack", "nack", "confirm" ->
                        settled.computeIfAbsent(e.str("group") + "\u0000" + e.str("id"), k -> new ArrayList<>()).add(e);
                    case "disconnect" -> disconnects.computeIfAbsent(e.str("consumer"), k -> new ArrayList<>()).add(e);
                    default -> { }
                }
            }
            for (Map.Entry<String, List<HistoryEvent>> entry : byKey.entrySet()) {
                List<HistoryEvent> deliveries = entry.getValue();
                for (int i = 1; i < deliveries.size(); i++) {
                    HistoryEvent held = deliveries.get(i - 1);
                    HistoryEvent next = deliveries.get(i);
                    String holder = held.str("consumer");
                    if (holder.equals(next.str("consumer"))) {
                        continue;
                    }
                    long from = held.t() - tol;
                    long to = next.t() + tol;
                    boolean released = next.t() >= held.t() + timeout - tol
                            || settled.getOrDefault(entry.getKey(), List.of()).stream().anyMatch(s ->
                                    settledBy(s).equals(holder)
                                            && s.t() >= from && s.t() <= to)
                            || disconnects.getOrDefault(holder, List.of()).stream().anyMatch(d ->
                                    d.t() >= from && d.t() <= to)
                            || faults.stream().anyMatch(f -> {
                                long start = faultStart(f);
                                long end = f.num("end");
                                return start <= to && (end == 0 || end >= from);
                            });
                    if (!released) {
                        report.violation(ViolationClass.DOUBLE_HOLD, String.format(
                                "%s in group %s: %s got it at %d while %s held it since %d",
                                held.str("id"), held.str("group"), next.str("consumer"), next.t(), holder, held.t()));
                    }
                }
            }
        }

        private void checkRooms() {
            Map<String, List<HistoryEvent>> byRoom = new TreeMap<>();
            for (HistoryEvent e : events) {
                if (e.type().startsWith("room_")) {
                    byRoom.computeIfAbsent(e.str("room"), k -> new ArrayList<>()).add(e);
                }
            }
            byRoom.forEach(this::checkRoom);
            for (HistoryEvent st : of("room_state")) {
                if (st.num("backlog") > 0) {
                    report.violation(ViolationClass.ROOM_STALLED, String.format(
                            "room %s: %d messages pending at %d, in flight %s, %d of %d members ready",
                            st.str("room"), st.num("backlog"), st.t(), st.str("inFlight"), st.num("ready"),
                            st.num("members")));
                }
            }
        }

        private void checkRoom(String room, List<HistoryEvent> roomEvents) {
            Set<String> seen = new HashSet<>();
            String current = null;
            for (HistoryEvent d : roomEvents) {
                if (!d.type().equals("room_deliver") || d.flag("oob")) {
                    continue;
                }
                String id = d.str("messageId");
                if (!seen.add(id)) {
                    continue;
                }
                if (current != null) {
                    String previous = current;
                    long by = d.t() + tol;
                    Set<String> syncRecipients = roomEvents.stream()
                            .filter(e -> e.type().equals("room_deliver") && e.str("messageId").equals(previous)
                                    && e.flag("sync") && !e.flag("oob") && e.t() <= by)
                            .map(e -> e.str("member"))
                            .collect(Collectors.toCollection(TreeSet::new));
                    List<String> missing = new ArrayList<>();
                    for (String member : syncRecipients) {
                        boolean released = roomEvents.stream().anyMatch(e -> e.t() <= by
                                && e.str("member").equals(member)
                                && ((e.type().equals("room_ack") && e.str("messageId").equals(previous))
                                        || e.type().equals("room_evict") || e.type().equals("room_unsubscribe")));
                        if (!released) {
                            missing.add(member);
                        }
                    }
                    if (!missing.isEmpty()) {
                        report.violation(ViolationClass.ROOM_LOCKSTEP, String.format(
                                "room %s: %s reached %s at %d before %s acked %s",
                                room, id, d.str("member"), d.t(), String.join(",", missing), previous));
                    }
                }
                current = id;
            }
        }

        private void checkDivergence() {
            // Keyed by shard and applied index: each shard is its own log ("shard" absent: 0).
            Map<String, Map<String, Set<String>>> byIndex = new TreeMap<>();
            Map<String, Map<String, String>> familiesByIndex = new TreeMap<>();
            for (HistoryEvent e : of("digest")) {
                String at = (e.str("shard").isEmpty() || e.str("shard").equals("0") ? "" : "shard " + e.str("shard") + ", ")
                        + "applied index " + e.num("appliedIndex");
                byIndex.computeIfAbsent(at, k -> new TreeMap<>())
                        .computeIfAbsent(e.str("digest"), k -> new TreeSet<>()).add(e.str("node"));
                if (!e.str("families").isEmpty()) {
                    familiesByIndex.computeIfAbsent(at, k -> new TreeMap<>())
                            .put(e.str("digest"), e.str("families"));
                }
            }
            byIndex.forEach((at, digests) -> {
                if (digests.size() > 1) {
                    String differing = differingFamilies(familiesByIndex.getOrDefault(at, Map.of()).values());
                    report.violation(ViolationClass.DIVERGENCE, at + ": "
                            + digests.entrySet().stream()
                                    .map(en -> en.getKey() + " on " + String.join(",", en.getValue()))
                                    .collect(Collectors.joining("; "))
                            + (differing.isEmpty() ? "" : "; column families that differ: " + differing));
                }
            });
        }

        /**
         * The column families whose own digests differ among {@code families} (each as the server
         * reports them, {@code {name=prefix:entries, …}}), with each version; empty with fewer than two.
         */
        private static String differingFamilies(java.util.Collection<String> families) {
            if (families.size() < 2) {
                return "";
            }
            Map<String, Set<String>> versions = new TreeMap<>();
            for (String all : families) {
                String body = all.startsWith("{") && all.endsWith("}") ? all.substring(1, all.length() - 1) : all;
                for (String pair : body.split(", ")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        versions.computeIfAbsent(pair.substring(0, eq), k -> new TreeSet<>()).add(pair.substring(eq + 1));
                    }
                }
            }
            return versions.entrySet().stream().filter(en -> en.getValue().size() > 1)
                    .map(en -> en.getKey() + " (" + String.join(" vs ", en.getValue()) + ")")
                    .collect(Collectors.joining(", "));
        }

        /** Each fault's availability figures (informational, never a violation), in order of start. */
        private void measureAvailability() {
            EarliestEnd publishOk = new EarliestEnd(okPublishCalls());
            EarliestEnd immediateDelivery = new EarliestEnd(immediateDeliveries());
            faults.stream().sorted(Comparator.comparingLong(HistoryChecker::faultStart)).forEach(f -> {
                long start = faultStart(f);
                long end = f.num("end");
                report.availability(new FaultAvailability(faultKind(f), f.str("node"), start,
                        end > 0 && end >= start ? end - start : FaultAvailability.NONE,
                        elapsed(start, publishOk.earliestEndFrom(start)),
                        elapsed(start, immediateDelivery.earliestEndFrom(start))));
            });
        }

        /** Every ok publish call, from its start to its return. */
        private List<Span> okPublishCalls() {
            return of("publish").stream().filter(p -> p.flag("ok"))
                    .map(p -> new Span(callStart(p), p.t())).toList();
        }

        /** Every delivery of an ok 0-delay publish, from the publish call's start to the delivery. */
        private List<Span> immediateDeliveries() {
            List<Span> spans = new ArrayList<>();
            for (HistoryEvent d : of("deliver")) {
                HistoryEvent p = publishes.get(d.str("id"));
                if (p != null && p.flag("ok") && immediate(p)) {
                    spans.add(new Span(callStart(p), d.t()));
                }
            }
            return spans;
        }

        /** A 0-delay publish: {@code delayMs == 0}, or without {@code delayMs}, due by its start + T. */
        private boolean immediate(HistoryEvent p) {
            if (p.has("delayMs")) {
                return p.num("delayMs") == 0;
            }
            long due = p.has("dueAt") ? p.num("dueAt") : p.t();
            return due <= callStart(p) + tol;
        }

        /** From {@code start} to {@code at}, at least 0 (clocks may disagree), or NONE for no {@code at}. */
        private static long elapsed(long start, long at) {
            return at == FaultAvailability.NONE ? FaultAvailability.NONE : Math.max(0, at - start);
        }

        private List<HistoryEvent> of(String type) {
            return events.stream().filter(e -> e.type().equals(type)).toList();
        }
    }

    /** An operation from its start to its end (epoch ms). */
    private record Span(long start, long end) { }

    /** Answers "the earliest end among the spans that start at or after x" by binary search. */
    private static final class EarliestEnd {
        private final long[] starts;
        private final long[] earliestEndFromHere;

        EarliestEnd(List<Span> spans) {
            List<Span> byStart = spans.stream().sorted(Comparator.comparingLong(Span::start)).toList();
            starts = byStart.stream().mapToLong(Span::start).toArray();
            earliestEndFromHere = new long[starts.length];
            long earliest = Long.MAX_VALUE;
            for (int i = starts.length - 1; i >= 0; i--) {
                earliest = Math.min(earliest, byStart.get(i).end());
                earliestEndFromHere[i] = earliest;
            }
        }

        /** The earliest end among the spans starting at or after {@code from}, or NONE if there are none. */
        long earliestEndFrom(long from) {
            int first = firstStartAtOrAfter(from);
            return first < starts.length ? earliestEndFromHere[first] : FaultAvailability.NONE;
        }

        private int firstStartAtOrAfter(long from) {
            int low = 0;
            int high = starts.length;
            while (low < high) {
                int mid = (low + high) >>> 1;
                if (starts[mid] < from) {
                    low = mid + 1;
                } else {
                    high = mid;
                }
            }
            return low;
        }
    }

    public static void main(String[] args) throws IOException {
        Path file = null;
        HistoryChecker checker = new HistoryChecker();
        for (String arg : args) {
            if (arg.startsWith("--tolerance=")) {
                checker = checker.withClockTolerance(Long.parseLong(arg.substring("--tolerance=".length())));
            } else if (arg.startsWith("--in-flight-timeout=")) {
                checker = checker.withInFlightTimeout(Long.parseLong(arg.substring("--in-flight-timeout=".length())));
            } else if (file == null && !arg.startsWith("--")) {
                file = Path.of(arg);
            } else {
                file = null;
                break;
            }
        }
        if (file == null) {
            System.err.println("usage: HistoryChecker <history.jsonl> [--tolerance=ms] [--in-flight-timeout=ms]");
            System.exit(2);
            return;
        }
        CheckReport report = checker.checkFile(file);
        System.out.print(report.render());
        System.exit(report.violations() == 0 ? 0 : 1);
    }
}
