package io.hourglass.server.security;

import io.grpc.Context;

/** The authenticated principal of the call being served ({@link AuthInterceptor}); null with security off. */
public final class Caller {
    static final Context.Key<String> PRINCIPAL = Context.key("hourglass-principal");

    private Caller() {
    }

    public static String principal() {
        return PRINCIPAL.get();
    }
}
