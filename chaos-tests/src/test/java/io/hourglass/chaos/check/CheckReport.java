package io.hourglass.chaos.check;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What the checker found: operation and fault counts, each violation class with examples, and the
 * availability figures of every fault (informational: they never make the check fail).
 */
public final class CheckReport {
    public static final int MAX_EXAMPLES = 5;

    private final Map<String, Integer> operations = new TreeMap<>();
    private final Map<String, Integer> faults = new TreeMap<>();
    private final Map<ViolationClass, Integer> counts = new EnumMap<>(ViolationClass.class);
    private final Map<ViolationClass, List<String>> examples = new EnumMap<>(ViolationClass.class);
    private final List<FaultAvailability> availability = new ArrayList<>();
    private final long clockToleranceMs;
    private final long inFlightTimeoutMs;

    CheckReport(long clockToleranceMs, long inFlightTimeoutMs) {
        this.clockToleranceMs = clockToleranceMs;
        this.inFlightTimeoutMs = inFlightTimeoutMs;
        for (ViolationClass c : ViolationClass.values()) {
            counts.put(c, 0);
            examples.put(c, new ArrayList<>());
        }
    }

    void operation(String type) {
        operations.merge(type, 1, Integer::sum);
    }

    void fault(String kind) {
        faults.merge(kind, 1, Integer::sum);
    }

    void availability(FaultAvailability fault) {
        availability.add(fault);
    }

    void violation(ViolationClass c, String example) {
        counts.merge(c, 1, Integer::sum);
        List<String> list = examples.get(c);
        if (list.size() < MAX_EXAMPLES) {
            list.add(example);
        }
    }

    public int count(ViolationClass c) {
        return counts.get(c);
    }

    public List<String> examples(ViolationClass c) {
        return Collections.unmodifiableList(examples.get(c));
    }

    public int violations() {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }

    public Map<String, Integer> operations() {
        return Collections.unmodifiableMap(operations);
    }

    public Map<String, Integer> faults() {
        return Collections.unmodifiableMap(faults);
    }

    /** Each fault's availability figures, in order of fault start. */
    public List<FaultAvailability> availability() {
        return Collections.unmodifiableList(availability);
    }

    /** The availability figures aggregated per fault kind, by kind name. */
    public Map<String, KindAvailability> availabilityByKind() {
        Map<String, List<FaultAvailability>> byKind = availability.stream()
                .collect(Collectors.groupingBy(FaultAvailability::kind, TreeMap::new, Collectors.toList()));
        Map<String, KindAvailability> result = new TreeMap<>();
        byKind.forEach((kind, faults) -> result.put(kind, KindAvailability.of(kind, faults)));
        return Collections.unmodifiableMap(result);
    }

    /** The summary table: operations by type, faults by kind, availability, each violation class. */
    public String render() {
        StringBuilder out = new StringBuilder();
        out.append(String.format("History check (clock tolerance %d ms, in-flight timeout %d ms)%n",
                clockToleranceMs, inFlightTimeoutMs));
        out.append(String.format("%n%-28s %8s%n", "OPERATION", "COUNT"));
        operations.forEach((type, n) -> out.append(String.format("%-28s %8d%n", type, n)));
        out.append(String.format("%-28s %8d%n", "total",
                operations.values().stream().mapToInt(Integer::intValue).sum()));
        out.append(String.format("%n%-28s %8s%n", "FAULT", "COUNT"));
        if (faults.isEmpty()) {
            out.append(String.format("%-28s %8d%n", "(none)", 0));
        }
        faults.forEach((kind, n) -> out.append(String.format("%-28s %8d%n", kind, n)));
        appendAvailabilityByKind(out);
        appendAvailabilityPerFault(out);
        out.append(String.format("%n%-28s %8s  %s%n", "VIOLATION", "COUNT", "EXAMPLES"));
        for (ViolationClass c : ViolationClass.values()) {
            List<String> list = examples.get(c);
            out.append(String.format("%-28s %8d  %s%n", c.name(), counts.get(c),
                    list.isEmpty() ? "-" : list.get(0)));
            for (int i = 1; i < list.size(); i++) {
                out.append(String.format("%-28s %8s  %s%n", "", "", list.get(i)));
            }
        }
        out.append(String.format("%n%s: %d violation(s)%n", violations() == 0 ? "PASS" : "FAIL", violations()));
        return out.toString();
    }

    private void appendAvailabilityByKind(StringBuilder out) {
        String row = "%-34s %3s  %-17s %s%n";
        out.append(String.format("%n" + row, "AVAILABILITY (ms from fault start)", "N", "PUBLISH p50/max",
                "DELIVER p50/max"));
        if (availability.isEmpty()) {
            out.append(String.format(row, "(no faults)", "0", "-", "-"));
        }
        availabilityByKind().values().forEach(k -> out.append(String.format(row, k.kind(), k.count(),
                medianAndMax(k.publishP50Ms(), k.publishMaxMs()), medianAndMax(k.deliveryP50Ms(), k.deliveryMaxMs()))));
    }

    private void appendAvailabilityPerFault(StringBuilder out) {
        if (availability.isEmpty()) {
            return;
        }
        String row = "  %-26s %-16s %14s %9s %9s %9s%n";
        out.append(String.format("%n" + row, "KIND", "NODE", "START", "DURATION", "PUBLISH", "DELIVER"));
        for (FaultAvailability f : availability) {
            out.append(String.format(row, f.kind(), f.node().isEmpty() ? "-" : f.node(), f.start(),
                    f.durationMs() == FaultAvailability.NONE ? "unhealed" : f.durationMs(),
                    ms(f.publishRecoveryMs()), ms(f.deliveryRecoveryMs())));
        }
    }

    private static String medianAndMax(long median, long max) {
        return median == FaultAvailability.NONE ? "none" : median + "/" + ms(max);
    }

    private static String ms(long value) {
        return value == FaultAvailability.NONE ? "none" : Long.toString(value);
    }

    @Override
    public String toString() {
        return render();
    }
}
