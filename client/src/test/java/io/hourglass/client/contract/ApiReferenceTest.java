package io.hourglass.client.contract;

import static io.hourglass.client.contract.HandBuilt.documented;
import static io.hourglass.client.contract.HandBuilt.field;
import static io.hourglass.client.contract.HandBuilt.file;
import static io.hourglass.client.contract.HandBuilt.message;
import static io.hourglass.client.contract.HandBuilt.rpc;
import static io.hourglass.client.contract.HandBuilt.service;
import static io.hourglass.client.contract.HandBuilt.set;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checked-in API reference, docs/api, is what the protos render ({@link ApiReference}). When a
 * page differs, is missing or is left over, this test writes every page as rendered under
 * target/api-reference/ and fails with the commands that put them in place — it never rewrites
 * docs/api itself. The hand-written guide, docs/api/README.md, must link every page, and its links
 * into the pages must land on a heading that exists, so that a renamed RPC or message shows there.
 */
@Timeout(30)
class ApiReferenceTest {
    private static final Path DOCS = Path.of("..", "docs", "api");
    private static final Path REGENERATED = Path.of("target", "api-reference");
    /** A Markdown link into a page: {@code ](broker.md#brokersubscribe)} or {@code ](#ack)}. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([a-z0-9_-]+\\.md)?#([a-z0-9_-]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} `([^`]+)`$", Pattern.MULTILINE);

    @Test
    void docsApiIsWhatTheProtosRender() throws IOException {
        Map<String, String> pages = ApiReference.pages(ApiDescriptors.current());
        List<String> differences = new ArrayList<>();
        List<String> leftOver = new ArrayList<>();
        for (Map.Entry<String, String> page : pages.entrySet()) {
            Path checkedIn = DOCS.resolve(page.getKey());
            if (!Files.exists(checkedIn)) {
                differences.add(page.getKey() + " is missing");
            } else {
                String was = Files.readString(checkedIn, StandardCharsets.UTF_8);
                if (!was.equals(page.getValue())) {
                    differences.add(page.getKey() + firstDifference(was, page.getValue()));
                }
            }
        }
        try (Stream<Path> files = Files.list(DOCS)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".md") && !n.equals(ApiReference.GUIDE) && !pages.containsKey(n))
                    .sorted().forEach(leftOver::add);
        }
        if (differences.isEmpty() && leftOver.isEmpty()) {
            return;
        }
        Files.createDirectories(REGENERATED);
        for (Map.Entry<String, String> page : pages.entrySet()) {
            Files.writeString(REGENERATED.resolve(page.getKey()), page.getValue(), StandardCharsets.UTF_8);
        }
        leftOver.forEach(n -> differences.add(n + " renders from no proto"));
        fail("docs/api differs from what the protos render: " + String.join("; ", differences)
                + ". This test rendered every page; from the repository root: cp client/" + REGENERATED + "/*.md docs/api/"
                + (leftOver.isEmpty() ? "" : " && rm " + String.join(" ", leftOver.stream().map(n -> "docs/api/" + n)
                        .toList()))
                + " (edit the comments in client/src/main/proto, never the generated pages)");
    }

    private static String firstDifference(String was, String is) {
        List<String> a = was.lines().toList();
        List<String> b = is.lines().toList();
        int line = 0;
        while (line < Math.min(a.size(), b.size()) && a.get(line).equals(b.get(line))) {
            line++;
        }
        return " differs first at line " + (line + 1) + ": checked in '" + (line < a.size() ? a.get(line) : "")
                + "', rendered '" + (line < b.size() ? b.get(line) : "") + "'";
    }

    @Test
    void theGuideLinksEveryPageAndItsLinksLandOnHeadings() throws IOException {
        Map<String, String> pages = ApiReference.pages(ApiDescriptors.current());
        String guide = Files.readString(DOCS.resolve(ApiReference.GUIDE), StandardCharsets.UTF_8);
        for (String page : pages.keySet()) {
            assertTrue(guide.contains("](" + page + ")") || guide.contains("](" + page + "#"),
                    "docs/api/README.md links to " + page);
        }
        Map<String, Set<String>> anchors = new HashMap<>();
        pages.forEach((page, text) -> anchors.put(page, anchorsOf(text)));
        List<String> broken = new ArrayList<>(brokenLinks(ApiReference.GUIDE, guide, anchors));
        pages.forEach((page, text) -> broken.addAll(brokenLinks(page, text, anchors)));
        assertEquals(List.of(), broken, "links to headings that no page has");
    }

    private static Set<String> anchorsOf(String page) {
        Set<String> anchors = new HashSet<>();
        Matcher m = HEADING.matcher(page);
        while (m.find()) {
            anchors.add(ApiReference.anchor(m.group(1)));
        }
        return anchors;
    }

    /** Links of {@code from} into generated pages whose anchor those pages lack (links within the guide are not checked). */
    private static List<String> brokenLinks(String from, String text, Map<String, Set<String>> anchors) {
        List<String> broken = new ArrayList<>();
        Matcher m = LINK.matcher(text);
        while (m.find()) {
            String page = m.group(1) == null ? from : m.group(1);
            if (page.equals(ApiReference.GUIDE)) {
                continue;
            }
            Set<String> known = anchors.get(page);
            if (known == null || !known.contains(m.group(2))) {
                broken.add(from + " → " + page + "#" + m.group(2));
            }
        }
        return broken;
    }

    @Test
    void aPageShowsRpcsFieldsAndTypesAsTheProtoDeclaresThem() {
        DescriptorProto.Builder request = message("PutRequest", field("topic", 1, Type.TYPE_STRING),
                field("tags", 2, Type.TYPE_STRING).setLabel(Label.LABEL_REPEATED),
                field("headers", 3, "PutRequest.HeadersEntry").setLabel(Label.LABEL_REPEATED),
                field("first", 4, "PutResponse").setOneofIndex(0),
                field("limit", 5, Type.TYPE_INT32).setProto3Optional(true).setOneofIndex(1))
                .addOneofDecl(OneofDescriptorProto.newBuilder().setName("choice"))
                .addOneofDecl(OneofDescriptorProto.newBuilder().setName("_limit"))
                .addNestedType(message("HeadersEntry", field("key", 1, Type.TYPE_STRING),
                        field("value", 2, Type.TYPE_STRING)).setOptions(MessageOptions.newBuilder().setMapEntry(true)));
        String page = ApiReference.pages(set(documented(file("queue.proto")
                .addService(service("Queue", rpc("Put", "PutRequest", "PutResponse").setServerStreaming(true)))
                .addMessageType(request)
                .addMessageType(message("PutResponse", field("id", 1, Type.TYPE_STRING)))))).get("queue.md");

        assertTrue(page.startsWith("# `hourglass.v1` — queue.proto\n"), page);
        assertTrue(page.contains("| [`Put`](#queueput) | [`PutRequest`](#putrequest) | [`PutResponse`](#putresponse) "
                + "| server streaming |\n"), page);
        assertTrue(page.contains("\n#### `Queue.Put`\n\n`rpc Put(PutRequest) returns (stream PutResponse)` — server "
                + "streaming\n\nrpc Put\n"), page);
        assertTrue(page.contains("| 1 | `topic` | `string` |  | field topic |\n"), page);
        assertTrue(page.contains("| 2 | `tags` | `string` | repeated | field tags |\n"), page);
        assertTrue(page.contains("| 3 | `headers` | `map<string, string>` |  | field headers |\n"), page);
        assertTrue(page.contains("| 4 | `first` | [`PutResponse`](#putresponse) | oneof `choice` | field first |\n"), page);
        assertTrue(page.contains("| 5 | `limit` | `int32` | optional | field limit |\n"), page);
        assertTrue(!page.contains("HeadersEntry"), "a map's entry type is no message of its own: " + page);
    }

    @Test
    void aCommentFitsInATableCell() {
        assertEquals("one | two<br><br>three four", ApiReference.cell("one | two\n\nthree\nfour").replace("\\|", "|"));
        assertEquals("`a\\|b`", ApiReference.cell("`a|b`"));
    }
}
