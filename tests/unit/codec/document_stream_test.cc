// The streaming reader (ReadStream) against the whole-text reader (ParseStream followed by List
// expansion): same entries, indexes, lines, values, repeated keys and errors, read through a
// Pull that hands over a few bytes at a time so every buffer boundary is crossed.
#include "rdma_webhook/codec/document_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rdma_webhook/codec/yaml.h"

namespace rw::codec {
namespace {

using nlohmann::json;

struct Source {
  std::string text;
  std::size_t step;  // bytes handed over per pull
  std::size_t pos = 0;
  std::size_t pulls = 0;
  Pull pull() {
    return [this](char* buffer, std::size_t capacity) {
      ++pulls;
      const std::size_t n = std::min({capacity, step, text.size() - pos});
      text.copy(buffer, n, pos);
      pos += n;
      return n;
    };
  }
  Rewind rewind() {
    return [this] { pos = 0; };
  }
};

std::vector<StreamEntry> Stream(const std::string& text, StreamOptions options = {},
                                bool rewindable = true, std::size_t step = 7) {
  Source source{text, step};
  std::vector<StreamEntry> out;
  ReadStream(source.pull(), rewindable ? source.rewind() : Rewind{}, options,
             [&](StreamEntry&& e) { out.push_back(std::move(e)); });
  return out;
}

// What the CLI did before streaming: the whole text parsed, then List documents expanded.
std::vector<StreamEntry> Whole(const std::string& text, Positions positions) {
  std::vector<StreamEntry> out;
  for (auto& doc : ParseStream(text, DuplicateKeys::kLastWins, positions)) {
    if (!doc.error.empty()) {
      out.push_back({std::move(doc), std::nullopt});
      continue;
    }
    if (!doc.value) continue;
    const json& v = *doc.value;
    if (v.is_object() && v.contains("kind") && v["kind"] == "List" && v.contains("items") &&
        v["items"].is_array()) {
      for (std::size_t i = 0; i < v["items"].size(); ++i) {
        StreamEntry e;
        e.doc.index = doc.index;
        e.doc.value = v["items"][i];
        const std::string prefix = "/items/" + std::to_string(i);
        for (const auto& d : doc.duplicate_keys)
          if (d.pointer.rfind(prefix + "/", 0) == 0) {
            auto rebased = d;
            rebased.pointer.erase(0, prefix.size());
            e.doc.duplicate_keys.push_back(rebased);
          }
        for (const auto& [p, where] : doc.positions)
          if (p == prefix || p.rfind(prefix + "/", 0) == 0)
            e.doc.positions[p.substr(prefix.size())] = where;
        e.item = i;
        out.push_back(std::move(e));
      }
      continue;
    }
    out.push_back({std::move(doc), std::nullopt});
  }
  return out;
}

std::string Describe(const StreamEntry& e) {
  std::string s = "#" + std::to_string(e.doc.index);
  if (e.item) s += "/items/" + std::to_string(*e.item);
  s += e.doc.value ? " " + e.doc.value->dump() : " (no value)";
  if (!e.doc.error.empty()) s += " error: " + e.doc.error;
  for (const auto& d : e.doc.duplicate_keys)
    s += " dup " + d.pointer + "@" + std::to_string(d.line) + ":" + std::to_string(d.column) + "<" +
         std::to_string(d.earlier_line);
  for (const auto& [p, where] : e.doc.positions)
    s += " pos " + p + "@" + std::to_string(where.line) + ":" + std::to_string(where.column);
  return s;
}

std::vector<std::string> Describe(const std::vector<StreamEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(Describe(e));
  return out;
}

struct SameAsWholeCase {
  const char* name;
  const char* text;
};

class SameAsWhole : public testing::TestWithParam<SameAsWholeCase> {};

TEST_P(SameAsWhole, EntriesIndexesLinesAndKeys) {
  for (const auto positions : {Positions::kSkip, Positions::kRecord}) {
    StreamOptions options;
    options.positions = positions;
    for (const std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 16})
      EXPECT_EQ(Describe(Stream(GetParam().text, options, true, step)),
                Describe(Whole(GetParam().text, positions)))
          << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, SameAsWhole,
    testing::Values(
        SameAsWholeCase{"yaml_documents",
                        "# licence\n\nkind: Pod\nmetadata: {name: a}\n---\n---\nkind: Job\n"},
        SameAsWholeCase{"yaml_end_marker", "a: 1\n...\n# after\n---\nb: [1, 2]\n"},
        SameAsWholeCase{"yaml_broken_middle", "a: 1\n---\nb: [1\n---\nc: 3\n"},
        SameAsWholeCase{"yaml_list_document",
                        "kind: List\nitems:\n- {kind: Pod, a: 1, a: 2}\n- kind: Job\n"},
        SameAsWholeCase{"yaml_list_kubectl",
                        "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
                        "    name: a\n  spec:\n    containers:\n    - name: c\n      image: x\n"
                        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\n"
                        "kind: List\nmetadata:\n  resourceVersion: \"\"\n"},
        SameAsWholeCase{"yaml_list_indented",
                        "kind: List\nitems:\n  - kind: Pod\n    a: 1\n  -   kind: Job\n"
                        "      b: [1, 2]\n      c: |\n        text\n"},
        SameAsWholeCase{"yaml_list_comments",
                        "# head\napiVersion: v1\nitems:\n# before\n- kind: Pod # end\n"
                        "  # inside\n  a: 1\n# between\n\n- kind: Job\n# after\nkind: \"List\"\n"},
        SameAsWholeCase{"yaml_list_duplicate_keys",
                        "items:\n- kind: Pod\n  a: 1\n  a: 2\n  m:\n    x: 1\n    x: 2\n"
                        "- kind: Job\n  b: 1\n  b: 1\nkind: List\nkind: List\n"},
        SameAsWholeCase{"yaml_list_duplicate_keys_once",
                        "items:\n- kind: Pod\n  a: 1\n  a: 2\n- kind: Job\n  b: 1\n  b: 1\n"
                        "kind: List\n"},
        SameAsWholeCase{"yaml_list_broken_item",
                        "items:\n- kind: Pod\n- kind: Job\n  a: [1\n- kind: Pod\nkind: List\n"},
        SameAsWholeCase{"yaml_list_bad_tag_item",
                        "items:\n- kind: Pod\n- kind: Job\n  a: !!int x\nkind: List\n"},
        SameAsWholeCase{"yaml_list_anchors",
                        "items:\n- &p {kind: Pod}\n- kind: Job\n  spec: &s {a: 1}\n- kind: Pod\n"
                        "  spec: *s\nkind: List\n"},
        SameAsWholeCase{"yaml_list_dash_alone",
                        "items:\n-\n  kind: Pod\n- # c\n  kind: Job\nkind: List\n"},
        SameAsWholeCase{"yaml_list_scalar_item", "items:\n- kind: Pod\n- 3\n-\nkind: List\n"},
        SameAsWholeCase{"yaml_not_a_list_with_items",
                        "apiVersion: v1\nitems:\n- kind: Pod\n- kind: Job\nkind: PodList\n"},
        SameAsWholeCase{"yaml_items_without_kind", "items:\n- kind: Pod\n- kind: Job\n"},
        SameAsWholeCase{"yaml_list_among_documents",
                        "# licence\n---\nkind: Pod\n--- \nitems:\n- kind: Pod\n  x: 1\n"
                        "- kind: Job\nkind: List\n---\n---\nitems:\n  - kind: Pod\nkind: List\n"
                        "...\n---\nkind: Job\n"},
        SameAsWholeCase{"yaml_list_crlf_and_tabs",
                        "items:\r\n- kind: Pod\r\n  a: \"x\ty\"\r\n- kind: Job\r\nkind: List\r\n"},
        SameAsWholeCase{"yaml_list_no_final_newline", "kind: List\nitems:\n- kind: Pod\n- a: 1"},
        SameAsWholeCase{"yaml_list_flow_items", "kind: List\nitems: [{kind: Pod}, {kind: Job}]\n"},
        SameAsWholeCase{"yaml_duplicates", "kind: Pod\nspec:\n  x: 1\n  x: 2\n"},
        SameAsWholeCase{"yaml_no_final_newline", "kind: Pod"},
        SameAsWholeCase{"byte_order_mark", "\xEF\xBB\xBFkind: Pod\n"}, SameAsWholeCase{"empty", ""},
        SameAsWholeCase{"json_list_kind_last",
                        "{\"apiVersion\": \"v1\", \"items\": [\n  {\"kind\": \"Pod\", \"a\": 1},\n"
                        "  {\"kind\": \"Job\",\n   \"b\": {\"c\": \"x\\\"]}\", \"c\": \"y\"}},\n"
                        "  null, 3, \"s\"\n], \"kind\": \"List\", \"metadata\": {}}\n"},
        SameAsWholeCase{
            "json_list_kind_first",
            "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\"}, {\"kind\": \"Job\"}]}"},
        SameAsWholeCase{"json_list_empty", "{\"kind\": \"List\", \"items\": []}"},
        SameAsWholeCase{"json_not_a_list",
                        "{\"kind\": \"PodList\", \"items\": [{\"kind\": \"Pod\"}]}"},
        SameAsWholeCase{"json_object", "\n{\"kind\": \"Pod\", \"x\": 1, \"x\": 2}\n"},
        SameAsWholeCase{"json_documents", "{\"kind\": \"Pod\"}\n---\n{\"kind\": \"Job\"}\n"},
        SameAsWholeCase{"json_then_yaml", "{\"kind\": \"Pod\"}\n---\nkind: Job\n"}),
    [](const testing::TestParamInfo<SameAsWholeCase>& c) { return c.param.name; });

TEST(DocumentStream, JsonListItemsInOrderWithTheirRepeatedKeysLines) {
  const auto entries = Stream(
      "{\"items\": [\n{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}},\n"
      "{\"kind\": \"Pod\",\n \"metadata\": {\"name\": \"b\", \"name\": \"c\"}}\n],\n"
      "\"kind\": \"List\"}");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].item, 0u);
  EXPECT_EQ((*entries[0].doc.value)["metadata"]["name"], "a");
  EXPECT_EQ(entries[1].item, 1u);
  EXPECT_EQ((*entries[1].doc.value)["metadata"]["name"], "c");
  ASSERT_EQ(entries[1].doc.duplicate_keys.size(), 1u);
  EXPECT_EQ(entries[1].doc.duplicate_keys[0].pointer, "/metadata/name");
  EXPECT_EQ(entries[1].doc.duplicate_keys[0].line, 4u);
  EXPECT_EQ(entries[1].doc.duplicate_keys[0].earlier_line, 4u);
}

TEST(DocumentStream, TruncatedJsonListReportsTheItemsBeforeAndNamesTheBrokenOne) {
  const auto entries = Stream(
      "{\"apiVersion\": \"v1\", \"items\": [\n{\"kind\": \"Pod\"},\n{\"kind\": \"Job\"},\n"
      "{\"kind\": \"Deploy");
  ASSERT_EQ(entries.size(), 3u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ((*entries[1].doc.value)["kind"], "Job");
  EXPECT_FALSE(entries[2].doc.value);
  EXPECT_EQ(entries[2].item, 2u);
  EXPECT_EQ(entries[2].doc.error, "line 4: the input ends inside the value begun at line 4");
}

TEST(DocumentStream, MissingCommaBetweenItemsNamesTheItemAfterIt) {
  const auto entries = Stream("{\"kind\": \"List\", \"items\": [{\"a\": 1}\n{\"b\": 2}]}");
  ASSERT_EQ(entries.size(), 2u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ(entries[1].item, 1u);
  EXPECT_EQ(entries[1].doc.error, "line 2: expected ',' or ']' after item 0, found '{'");
}

TEST(DocumentStream, BrokenItemIsItsOwnErrorAndTheNextIsRead) {
  const auto entries =
      Stream("{\"kind\": \"List\", \"items\": [{\"a\": 1},\n{\"b\": \"x\" \"y\"},\n{\"c\": 3}]}");
  ASSERT_EQ(entries.size(), 3u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ(entries[1].item, 1u);
  EXPECT_FALSE(entries[1].doc.value);
  EXPECT_NE(entries[1].doc.error.find("line 2"), std::string::npos) << entries[1].doc.error;
  EXPECT_EQ((*entries[2].doc.value)["c"], 3);
}

TEST(DocumentStream, OversizedYamlDocumentIsAnErrorAndTheNextIsRead) {
  StreamOptions options;
  options.max_document_bytes = 64;
  const auto entries = Stream("a: 1\n---\nb: " + std::string(100, 'x') + "\n---\nc: 3\n", options);
  ASSERT_EQ(entries.size(), 3u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ(entries[1].doc.index, 1u);
  EXPECT_EQ(entries[1].doc.error, "line 2: document larger than 0 MiB");
  EXPECT_EQ((*entries[2].doc.value)["c"], 3);
}

// A YAML List larger than the cap is read item by item: only each item must fit.
TEST(DocumentStream, YamlListItemsAreReadOneAtATime) {
  for (const std::string indent : {"", "  "}) {
    std::string text = "apiVersion: v1\nitems:\n";
    for (int i = 0; i < 200; ++i)
      text += indent + "- kind: Pod\n" + indent + "  metadata:\n" + indent + "    name: p" +
              std::to_string(i) + "\n";
    text += "kind: List\nmetadata:\n  resourceVersion: \"\"\n";
    StreamOptions options;
    options.max_document_bytes = 256;
    options.positions = Positions::kRecord;
    const auto entries = Stream(text, options);
    ASSERT_EQ(entries.size(), 200u) << testing::PrintToString(Describe(entries));
    EXPECT_EQ(entries[7].item, 7u);
    EXPECT_EQ(entries[7].doc.index, 0u);
    EXPECT_EQ(entries[7].doc.line, 1u);
    EXPECT_EQ((*entries[7].doc.value)["metadata"]["name"], "p7");
    EXPECT_EQ(entries[7].doc.positions.at("/metadata/name").line, 3u + 7 * 3 + 2);
    EXPECT_EQ(entries[7].doc.positions.at("").column, indent.size() + 3);
  }
}

TEST(DocumentStream, YamlListWithAnchorsIsReadWhole) {
  StreamOptions options;
  options.max_document_bytes = 64;
  const auto entries = Stream(
      "items:\n- kind: Pod\n  spec: &s {a: 1}\n- kind: Pod\n  spec: *s\nkind: List\n", options);
  ASSERT_EQ(entries.size(), 1u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ(entries[0].doc.error, "line 1: document larger than 0 MiB");
}

TEST(DocumentStream, OversizedJsonItemIsAnErrorAndTheNextIsRead) {
  StreamOptions options;
  options.max_document_bytes = 32;
  const auto entries = Stream(
      "{\"kind\": \"List\", \"items\": [{\"a\": \"" + std::string(100, 'x') + "\"},\n{\"c\": 3}]}",
      options);
  ASSERT_EQ(entries.size(), 2u) << testing::PrintToString(Describe(entries));
  EXPECT_EQ(entries[0].doc.error, "line 1: item larger than 0 MiB");
  EXPECT_EQ((*entries[1].doc.value)["c"], 3);
}

TEST(DocumentStream, PromisedListIsReadOnceWithoutRewind) {
  StreamOptions options;
  options.json_list = true;
  std::string text = "{\"apiVersion\": \"v1\", \"items\": [";
  for (int i = 0; i < 1000; ++i) text += (i ? "," : "") + std::string("{\"kind\": \"Pod\"}");
  text += "], \"kind\": \"List\"}";
  Source source{text, 4096};
  std::size_t items = 0, pulls_at_first = 0;
  ReadStream(source.pull(), Rewind{}, options, [&](StreamEntry&& e) {
    if (items++ == 0) pulls_at_first = source.pulls;
    EXPECT_EQ(e.item, items - 1);
  });
  EXPECT_EQ(items, 1000u);
  // The first item arrives after the first few kilobytes, not after the whole text.
  EXPECT_LE(pulls_at_first, 2u);
  EXPECT_EQ(source.pos, text.size());
}

TEST(DocumentStream, EmptyPromisedListGivesNoEntry) {
  StreamOptions options;
  options.json_list = true;
  EXPECT_TRUE(Stream("", options, false).empty());
  EXPECT_TRUE(Stream("{\"items\": [], \"kind\": \"List\"}", options, false).empty());
}

}  // namespace
}  // namespace rw::codec
