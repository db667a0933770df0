package io.hourglass.chaos.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checker's rules for the scheduling operations (DESIGN §9): a committed cancel, a keyed
 * replace and a dead-letter move, each judged only where the history proves it (the rules and
 * their allowances are in the package documentation). Also tells the loss rules which messages a
 * cancel or a replace may have removed, since a removed message is rightly never delivered.
 * A pure function of the events, like the checker that owns it.
 */
final class SchedulingRules {
    private static final String CANCELLED = "CANCELLED";
    private static final String ALREADY_DELIVERED = "ALREADY_DELIVERED";

    private final List<HistoryEvent> events;
    private final long tol;
    private final CheckReport report;
    private final List<HistoryEvent> publishAttempts = new ArrayList<>();
    private final List<HistoryEvent> cancels = new ArrayList<>();
    /** Topic and schedule key → the publish and cancel attempts that name the key. */
    private final Map<String, List<HistoryEvent>> byKey = new HashMap<>();
    /** Topic and id → the cancel attempts that name the id. */
    private final Map<String, List<HistoryEvent>> cancelsById = new HashMap<>();
    /** Every id an ok publish answered it replaced → the earliest such acknowledgement. */
    private final Map<String, HistoryEvent> replacedBy = new HashMap<>();
    /** Message id → its deliveries, in time order. */
    private final Map<String, List<HistoryEvent>> deliveries = new HashMap<>();

    /** @param events sorted by time (stable), as the checker sorts them */
    SchedulingRules(List<HistoryEvent> events, long tol, CheckReport report) {
        this.events = events;
        this.tol = tol;
        this.report = report;
        for (HistoryEvent e : events) {
            switch (e.type()) {
                case "publish" -> {
                    publishAttempts.add(e);
                    keyed(e);
                    if (e.flag("ok") && !e.str("replacedId").isEmpty()) {
                        replacedBy.putIfAbsent(e.str("replacedId"), e);
                    }
                }
                case "cancel" -> {
                    cancels.add(e);
                    keyed(e);
                    if (!e.str("id").isEmpty()) {
                        cancelsById.computeIfAbsent(e.str("topic") + "\u0000" + e.str("id"), k -> new ArrayList<>()).add(e);
                    }
                }
                case "deliver" -> deliveries.computeIfAbsent(e.str("id"), k -> new ArrayList<>()).add(e);
                default -> { }
            }
        }
    }

    private void keyed(HistoryEvent e) {
        if (!e.str("key").isEmpty()) {
            byKey.computeIfAbsent(e.str("topic") + "\u0000" + e.str("key"), k -> new ArrayList<>()).add(e);
        }
    }

    void check() {
        checkAfterCancel();
        checkAfterReplace();
        checkDeadLetters();
    }

    /**
     * Whether a cancel or a keyed publish may have removed this (ok) publish's message, so that it is
     * rightly never delivered: an ok publish names it as replaced; a cancel attempt, whatever its
     * outcome, names its id; or a publish or cancel attempt names its key and may have committed after
     * it (it failed, its outcome unknown, or it returned after this publish started).
     */
    boolean mayHaveBeenRemoved(HistoryEvent p) {
        String id = p.str("id");
        if (replacedBy.containsKey(id) || cancelsById.containsKey(p.str("topic") + "\u0000" + id)) {
            return true;
        }
        if (p.str("key").isEmpty()) {
            return false;
        }
        for (HistoryEvent op : byKey.getOrDefault(p.str("topic") + "\u0000" + p.str("key"), List.of())) {
            if (op != p && !(op.type().equals("publish") && op.str("id").equals(id)) && mayFollow(op, p)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code op} may have committed after publish {@code p}: it failed or did not return before p began. */
    private boolean mayFollow(HistoryEvent op, HistoryEvent p) {
        return !op.flag("ok") || op.t() + tol >= HistoryChecker.callStart(p);
    }

    /**
     * When a delivery started: the server's send time {@code sentAt} where recorded (never later
     * than the receipt, whatever the clocks say; 0 is "not stamped"), else the receipt {@code t}.
     */
    static long deliveryStart(HistoryEvent d) {
        return d.has("sentAt") && d.num("sentAt") > 0 ? Math.min(d.t(), d.num("sentAt")) : d.t();
    }

    /**
     * AFTER_CANCEL: a cancel that answered CANCELLED proves that no copy had gone out and none will;
     * one that answered ALREADY_DELIVERED proves that none goes out after it. A receipt alone cannot
     * show a delivery went out after the cancel (a copy sent before may be handled late), so after
     * ALREADY_DELIVERED only deliveries with the server's send time count.
     */
    private void checkAfterCancel() {
        for (HistoryEvent c : cancels) {
            String outcome = c.str("outcome");
            if (!c.flag("ok") || !(outcome.equals(CANCELLED) || outcome.equals(ALREADY_DELIVERED))) {
                continue; // failed, unknown or NOT_FOUND: proves nothing
            }
            String target = c.has("id") && !c.str("id").isEmpty() ? c.str("id") : keyedTarget(c);
            if (target == null) {
                continue;
            }
            for (HistoryEvent d : deliveries.getOrDefault(target, List.of())) {
                boolean counts = outcome.equals(CANCELLED) || d.has("sentAt");
                if (counts && deliveryStart(d) > c.t() + tol) {
                    report.violation(ViolationClass.AFTER_CANCEL, String.format(
                            "%s to %s (consumer %s) sent %d, received %d; its cancel%s answered %s at %d",
                            target, receiver(d), d.str("consumer"), deliveryStart(d), d.t(),
                            c.str("key").isEmpty() ? "" : " by key '" + c.str("key") + "'", outcome, c.t()));
                }
            }
        }
    }

    /**
     * The message a cancel by key removed: the key's ok publish that returned last before the cancel
     * began. Any publish of the key that committed later replaced it before the cancel, so either
     * way it is gone once the cancel returned. Null if there is none.
     */
    private String keyedTarget(HistoryEvent c) {
        HistoryEvent latest = null;
        for (HistoryEvent p : byKey.getOrDefault(c.str("topic") + "\u0000" + c.str("key"), List.of())) {
            if (p.type().equals("publish") && p.flag("ok") && p.t() <= HistoryChecker.callStart(c)
                    && (latest == null || p.t() >= latest.t())) {
                latest = p;
            }
        }
        return latest == null ? null : latest.str("id");
    }

    /** AFTER_REPLACE: no delivery of a replaced message starts after its replacement was acknowledged. */
    private void checkAfterReplace() {
        replacedBy.forEach((id, replacement) -> {
            for (HistoryEvent d : deliveries.getOrDefault(id, List.of())) {
                if (deliveryStart(d) > replacement.t() + tol) {
                    report.violation(ViolationClass.AFTER_REPLACE, String.format(
                            "%s to %s (consumer %s) sent %d, received %d; replaced by %s (key '%s') at %d",
                            id, receiver(d), d.str("consumer"), deliveryStart(d), d.t(), replacement.str("id"),
                            replacement.str("key"), replacement.t()));
                }
            }
        });
    }

    /**
     * DEAD_LETTER_LOST: per {@code group_config} with max deliveries and a dead-letter topic D, every
     * ok publish to its topic made after it, without TTL, due by END - T, not possibly cancelled or
     * replaced, while the group and a durable group of D were subscribed, that the group never
     * acked: some consumer of D received its copy (headers naming topic, group and id).
     */
    private void checkDeadLetters() {
        long end = events.stream().mapToLong(HistoryEvent::t).max().orElse(0);
        Map<String, Long> firstSubscribe = new HashMap<>();
        Set<String> settled = new HashSet<>();
        Set<String> deadLettered = new HashSet<>();
        Map<String, Integer> deliveryCounts = new HashMap<>();
        for (HistoryEvent e : events) {
            switch (e.type()) {
                case "subscribe" -> {
                    if (!e.str("group").isEmpty()) {
                        firstSubscribe.merge(e.str("topic") + "\u0000" + e.str("group"), e.t(), Math::min);
                    }
                }
                case "ack", "confirm" -> settled.add(e.str("group") + "\u0000" + e.str("id"));
                case "deliver" -> {
                    if (!e.str("deadLetterId").isEmpty()) {
                        deadLettered.add(e.str("topic") + "\u0000" + e.str("deadLetterTopic") + "\u0000"
                                + e.str("deadLetterGroup") + "\u0000" + e.str("deadLetterId"));
                    }
                    deliveryCounts.merge(e.str("group") + "\u0000" + e.str("id"), 1, Integer::sum);
                }
                default -> { }
            }
        }
        for (HistoryEvent config : events) {
            if (!config.type().equals("group_config") || config.num("maxDeliveries") <= 0
                    || config.str("deadLetter").isEmpty()) {
                continue;
            }
            String topic = config.str("topic");
            String group = config.str("group");
            String deadLetter = config.str("deadLetter");
            Long groupSince = firstSubscribe.get(topic + "\u0000" + group);
            long dlqSince = firstSubscribe.entrySet().stream()
                    .filter(en -> en.getKey().startsWith(deadLetter + "\u0000"))
                    .mapToLong(Map.Entry::getValue).min().orElse(Long.MAX_VALUE);
            if (groupSince == null || dlqSince == Long.MAX_VALUE) {
                continue; // nobody to deliver to, or nobody to receive the copies: nothing is provable
            }
            for (HistoryEvent p : publishAttempts) {
                long due = p.has("dueAt") ? p.num("dueAt") : p.t();
                if (!p.flag("ok") || !p.str("topic").equals(topic) || p.num("expiresAt") > 0 || due > end - tol
                        || HistoryChecker.callStart(p) < config.t() || groupSince + tol > p.t()
                        || dlqSince + tol > p.t() || settled.contains(group + "\u0000" + p.str("id"))
                        || mayHaveBeenRemoved(p)) {
                    continue;
                }
                if (!deadLettered.contains(deadLetter + "\u0000" + topic + "\u0000" + group + "\u0000" + p.str("id"))) {
                    report.violation(ViolationClass.DEAD_LETTER_LOST, String.format(
                            "%s (topic %s, published %d, due %d): %d deliveries to %s, never acked, no copy received"
                                    + " from dead-letter topic %s",
                            p.str("id"), topic, p.t(), due,
                            deliveryCounts.getOrDefault(group + "\u0000" + p.str("id"), 0), group, deadLetter));
                }
            }
        }
    }

    private static String receiver(HistoryEvent e) {
        return e.str("group").isEmpty() ? "*" + e.str("consumer") : e.str("group");
    }
}
