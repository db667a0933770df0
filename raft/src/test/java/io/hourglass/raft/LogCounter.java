package io.hourglass.raft;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/** Collects every ERROR logged in this JVM while open (a test attaches it, then closes it). */
final class LogCounter extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private static final int KEPT = 10_000;
    private final List<ILoggingEvent> errors = new CopyOnWriteArrayList<>();
    private volatile long count;

    static LogCounter attach() {
        LogCounter counter = new LogCounter();
        counter.setContext(root().getLoggerContext());
        counter.start();
        root().addAppender(counter);
        return counter;
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    @Override
    protected void append(ILoggingEvent event) {
        if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
            count++; // appenders are called under the appender's lock: one writer at a time
            if (errors.size() < KEPT) {
                errors.add(event);
            }
        }
    }

    /** ERROR events seen so far. */
    long errors() {
        return count;
    }

    /** ERROR events whose logger name ends with {@code loggerSuffix}. */
    long errorsFrom(String loggerSuffix) {
        return errors.stream().filter(e -> e.getLoggerName().endsWith(loggerSuffix)).count();
    }

    /** One line per ERROR seen, for assertion messages. */
    String describe() {
        StringBuilder b = new StringBuilder(count + " ERROR lines:");
        errors.stream().limit(20).forEach(e -> b.append("\n  ").append(e.getLoggerName()).append(": ")
                .append(e.getFormattedMessage()));
        return b.toString();
    }

    @Override
    public void close() {
        root().detachAppender(this);
        stop();
    }
}
