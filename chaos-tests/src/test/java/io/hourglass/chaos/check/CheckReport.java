package io.hourglass.chaos.check;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the checker found: operation and fault counts, and each violation class with examples. */
public final class CheckReport {
    public static final int MAX_EXAMPLES = 5;

    private final Map<String, Integer> operations = new TreeMap<>();
    private final Map<String, Integer> faults = new TreeMap<>();
    private final Map<ViolationClass, Integer> counts = new EnumMap<>(ViolationClass.class);
    private final Map<ViolationClass, List<String>> examples = new EnumMap<>(ViolationClass.class);
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

    /** The summary table: operations by type, faults by kind, each violation class. */
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

    @Override
    public String toString() {
        return render();
    }
}
