// The streaming reader: which way a stream is read (a JSON List item by item, YAML document by
// document, or, for one JSON value that is not a List, whole) and the YAML way.
#include "rdma_webhook/codec/document_stream.h"

#include <string>
#include <utility>
#include <vector>

#include "byte_reader.h"
#include "json_list.h"
#include "stream_parts.h"

namespace rw::codec {
namespace {

std::string Mebibytes(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Reads YAML documents; those in `plans` (Lists in kubectl's layout) item by item: each item's
// lines are cut at the next item's first line, its dash blanked so the item is a mapping at the
// column where it stands, and parsed alone with its own first line, so lines, columns and
// repeated keys are the whole reader's. The List's other lines go to the splitter as usual.
void ReadYamlDocuments(ByteReader& in, const StreamOptions& options,
                       const std::vector<YamlListPlan>& plans, const EntrySink& sink) {
  DocumentSplitter splitter(options.max_document_bytes);
  std::size_t index = 0, planned = 0;
  auto parse = [&](const Chunk& chunk) {
    if (planned < plans.size() && plans[planned].index == index) {
      ++planned;  // its items were read as they came
      ++index;
      return;
    }
    SourceDocument doc;
    if (chunk.oversized) {
      doc.index = index;
      doc.line = chunk.first_line;
      doc.error = "line " + std::to_string(chunk.first_line) + ": document larger than " +
                  Mebibytes(options.max_document_bytes);
    } else {
      doc = ParseChunk(chunk, index, options.duplicates, options.positions);
    }
    ++index;
    EmitDocument(std::move(doc), sink);
  };
  const YamlListPlan* plan = nullptr;  // the List whose items are being read
  std::size_t next_plan = 0, item = 0;
  Chunk text{"", 0};
  auto emit_item = [&] {
    SourceDocument doc = ParseChunk(text, plan->index, options.duplicates, options.positions);
    doc.line = plan->line;
    sink({std::move(doc), item});
  };
  std::string line;
  bool truncated = false;
  std::size_t line_no = 0;
  while (in.ReadLine(line, options.max_document_bytes, truncated)) {
    ++line_no;
    if (plan == nullptr && next_plan < plans.size() &&
        plans[next_plan].items.front().line == line_no) {
      plan = &plans[next_plan++];
      item = 0;
      text = Chunk{"", line_no};
    }
    if (plan != nullptr && line_no == plan->end_line) {
      emit_item();
      plan = nullptr;
    }
    if (plan == nullptr) {
      if (auto chunk = splitter.AddLine(line)) parse(*chunk);
      continue;
    }
    if (item + 1 < plan->items.size() && plan->items[item + 1].line == line_no) {
      emit_item();
      ++item;
      text = Chunk{"", line_no};
    }
    if (line_no == plan->items[item].line)
      line.replace(0, plan->items[item].column, plan->items[item].column, ' ');
    text.text += line;
    text.text.push_back('\n');
    splitter.SkipLine();
  }
  if (plan != nullptr) emit_item();
  if (auto chunk = splitter.Finish()) parse(*chunk);
}

// One JSON value that is not a List: read as the whole-text reader reads it.
void ReadWhole(ByteReader& in, const StreamOptions& options, const EntrySink& sink) {
  std::string text, line;
  bool truncated = false, first = true;
  while (in.ReadLine(line, options.max_document_bytes, truncated)) {
    if (!first) text.push_back('\n');
    first = false;
    text += line;
    if (truncated || text.size() > options.max_document_bytes) {
      SourceDocument doc;
      doc.error = "line 1: document larger than " + Mebibytes(options.max_document_bytes);
      sink({std::move(doc), std::nullopt});
      return;
    }
  }
  for (auto& doc : ParseStream(text, options.duplicates, options.positions))
    EmitDocument(std::move(doc), sink);
}

}  // namespace

void ReadStream(const Pull& pull, const Rewind& rewind, const StreamOptions& options,
                const EntrySink& sink) {
  if (options.json_list) {
    ByteReader in(pull);
    in.SkipByteOrderMark();
    ReadJsonListItems(in, options, sink);
    return;
  }
  if (!rewind) {
    ByteReader in(pull);
    in.SkipByteOrderMark();
    ReadWhole(in, options, sink);
    return;
  }
  JsonShape shape;
  {
    ByteReader in(pull);
    in.SkipByteOrderMark();
    shape = ScanJsonShape(in);
  }
  rewind();
  ByteReader in(pull);
  in.SkipByteOrderMark();
  if (shape.IsList() || shape.IsBrokenList()) {
    ReadJsonListItems(in, options, sink);
  } else if (shape.valid) {
    ReadWhole(in, options, sink);
  } else {
    std::vector<YamlListPlan> plans = PlanYamlLists(in, options.max_document_bytes);
    rewind();
    ByteReader again(pull);
    again.SkipByteOrderMark();
    ReadYamlDocuments(again, options, plans, sink);
  }
}

}  // namespace rw::codec
