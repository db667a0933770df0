package io.hourglass.server.http;

import io.hourglass.raft.Readiness;
import io.hourglass.server.console.ConsoleApi;
import io.hourglass.server.console.ConsoleAssets;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.util.Fields;
import io.hourglass.server.config.HttpConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.security.GeneralSecurityException;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.X509ExtendedKeyManager;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * {@code /metrics} (Prometheus text), {@code /healthz} (the process is up) and {@code /readyz}
 * (the node is in a group with a leader and has caught up) on the node's HTTP port; and, when a
 * {@link ConsoleApi} is given, the web console at {@code /} with the JSON it reads under
 * {@code /api/v1/} (whose calls authenticate as the gRPC API does: see {@link ConsoleApi}).
 *
 * <p>Jetty parses requests in its selector, so a client that sends half a request and stalls holds
 * no pool thread; {@code http.idleTimeout} closes it. Requests run on a bounded, named pool
 * ({@code http.threads}); {@code http.maxConnections} caps open connections, past which the
 * acceptor waits. Probes therefore answer while slow or hostile clients hang on the port.
 */
public final class HealthHttpServer implements AutoCloseable {
    private final Server server;
    private final ServerConnector connector;

    /**
     * @param tls the node's certificate for HTTPS (TLS 1.3 or 1.2), or null for plain HTTP
     * @param metricsToken whether a bearer token may read {@code /metrics}, or null when it is open;
     *        the probes answer without one (a kubelet presents none)
     */
    public HealthHttpServer(String bindHost, HttpConfig config, X509ExtendedKeyManager tls, Predicate<String> metricsToken,
                            Supplier<String> metrics, Supplier<Readiness> ready) {
        this(bindHost, config, tls, metricsToken, metrics, ready, null);
    }

    /** @param console the console's API, or null for none (probes and metrics only) */
    public HealthHttpServer(String bindHost, HttpConfig config, X509ExtendedKeyManager tls, Predicate<String> metricsToken,
                            Supplier<String> metrics, Supplier<Readiness> ready, ConsoleApi console) {
        ConsoleAssets assets = console == null ? null : new ConsoleAssets();
        QueuedThreadPool pool = new QueuedThreadPool(config.threads(), Math.min(2, config.threads()));
        pool.setName("hourglass-http");
        pool.setDaemon(true);
        server = new Server(pool);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setRequestHeaderSize(8 << 10);
        if (tls == null) {
            connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        } else {
            SecureRequestCustomizer secure = new SecureRequestCustomizer();
            secure.setSniHostCheck(false); // probes and scrapers dial an IP address, which sends no SNI
            http.addCustomizer(secure);
            SslContextFactory.Server ssl = new SslContextFactory.Server();
            ssl.setSslContext(sslContext(tls));
            ssl.setIncludeProtocols("TLSv1.3", "TLSv1.2");
            connector = new ServerConnector(server, 1, 1, new SslConnectionFactory(ssl, HttpVersion.HTTP_1_1.asString()),
                    new HttpConnectionFactory(http));
        }
        connector.setHost(bindHost);
        connector.setPort(config.port());
        connector.setIdleTimeout(config.idleTimeout().toMillis());
        server.addConnector(connector);
        server.addBean(new NetworkConnectionLimit(config.maxConnections(), connector));
        server.setHandler(new Handler.Abstract() { // blocking: a scrape runs on the pool, never on the selector
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                switch (path) {
                    case "/metrics" -> {
                        if (metricsToken != null && !metricsToken.test(bearer(request))) {
                            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
                            respond(response, callback, 401, "text/plain",
                                    "unauthenticated: /metrics needs 'Authorization: Bearer <token>'\n");
                        } else {
                            respond(response, callback, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get());
                        }
                    }
                    case "/healthz" -> respond(response, callback, 200, "text/plain", "ok\n");
                    case "/readyz" -> {
                        Readiness r = ready.get();
                        respond(response, callback, r.ready() ? 200 : 503, "text/plain",
                                r.ready() ? "ready\n" : "not ready: " + r.detail() + "\n");
                    }
                    default -> {
                        if (console != null && path.startsWith("/api/v1/")) {
                            api(console, path.substring("/api/v1".length()), request, response, callback);
                        } else if (assets != null && assets.get(path) != null) {
                            ConsoleAssets.Asset asset = assets.get(path);
                            secureHeaders(response);
                            respond(response, callback, 200, asset.type(), asset.body());
                        } else {
                            respond(response, callback, 404, "text/plain", "not found; this port serves "
                                    + (console != null ? "the console at /, its API under /api/v1/, " : "")
                                    + "/metrics, /healthz and /readyz\n");
                        }
                    }
                }
                return true;
            }
        });
    }

    private static void api(ConsoleApi console, String path, Request request, Response response, Callback callback) {
        Map<String, String> query = new HashMap<>();
        Fields fields = Request.extractQueryParameters(request);
        for (Fields.Field f : fields) {
            query.putIfAbsent(f.getName(), f.getValue());
        }
        ConsoleApi.Reply reply = console.handle(request.getMethod(), path, query, bearer(request));
        secureHeaders(response);
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
        if (reply.status() == 401) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
        }
        respond(response, callback, reply.status(), "application/json", reply.json());
    }

    /** Nothing but this node's own files and calls; not framed elsewhere; types as declared. */
    private static void secureHeaders(Response response) {
        response.getHeaders().put("Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
        response.getHeaders().put("X-Content-Type-Options", "nosniff");
        response.getHeaders().put("Referrer-Policy", "no-referrer");
    }

    private static String bearer(Request request) {
        String h = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        return h != null && h.regionMatches(true, 0, "Bearer ", 0, 7) ? h.substring(7).strip() : null;
    }

    private static SSLContext sslContext(X509ExtendedKeyManager keys) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[] {keys}, null, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no TLS in this JVM: " + e.getMessage(), e);
        }
    }

    private static void respond(Response response, Callback callback, int code, String type, String body) {
        respond(response, callback, code, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void respond(Response response, Callback callback, int code, String type, byte[] bytes) {
        response.setStatus(code);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }

    public void start() throws IOException {
        try {
            server.start();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot start the HTTP endpoint: " + e.getMessage(), e);
        }
    }

    public int port() {
        return connector.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
