package io.hourglass.cli;

import com.google.protobuf.ByteString;

/** How listings show payloads: a preview, so that a 1 MiB message does not fill the terminal. */
final class Payloads {
    /** Characters of a payload a preview keeps. */
    static final int PREVIEW_CHARS = 64;

    private Payloads() {
    }

    /** The UTF-8 text of {@code payload}, cut to {@link #PREVIEW_CHARS} code points plus {@code …(N bytes)}. */
    static String preview(ByteString payload) {
        String text = payload.toStringUtf8();
        if (text.codePointCount(0, text.length()) <= PREVIEW_CHARS) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, PREVIEW_CHARS)) + "…(" + payload.size() + " bytes)";
    }
}
