// The streaming reader: which way a stream is read (a JSON List item by item, YAML document by
// document, or, for one JSON value that is not a List, whole) and the YAML way.
#include "rdma_webhook/codec/document_stream.h"

#include <string>
#include <utility>

#include "byte_reader.h"
#include "json_list.h"
#include "stream_parts.h"

namespace rw::codec {
namespace {

std::string Mebibytes(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void ReadYamlDocuments(ByteReader& in, const StreamOptions& options, const EntrySink& sink) {
  DocumentSplitter splitter(options.max_document_bytes);
  std::size_t index = 0;
  auto parse = [&](const Chunk& chunk) {
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
  std::string line;
  bool truncated = false;
  while (in.ReadLine(line, options.max_document_bytes, truncated))
    if (auto chunk = splitter.AddLine(line)) parse(*chunk);
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
    ReadYamlDocuments(in, options, sink);
  }
}

}  // namespace rw::codec
