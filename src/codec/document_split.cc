// Splitting a YAML stream into documents, line by line, so the whole-text reader and the
// streaming reader count documents and lines the same way.
#include <string>
#include <utility>

#include "stream_parts.h"

namespace rw::codec {

// A document marker as PyYAML's scanner sees one: `---` or `...` at column 0, followed by
// whitespace or the end of the line (`---#x` is plain text, not a marker).
bool IsMarker(std::string_view line, std::string_view marker) {
  if (line.substr(0, marker.size()) != marker) return false;
  return line.size() == marker.size() || line[marker.size()] == ' ' ||
         line[marker.size()] == '\t' || line[marker.size()] == '\r';
}

bool IsDocument(const Chunk& chunk) {
  return chunk.explicit_start || chunk.oversized || !Blank(chunk.text);
}

bool Blank(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    auto first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' && !(first == 0 && line[0] == '%'))
      return false;
    pos = end + 1;
  }
  return true;
}

std::optional<Chunk> DocumentSplitter::Close() {
  if (!keep_all_ && !IsDocument(current_)) return std::nullopt;
  return std::move(current_);
}

std::optional<Chunk> DocumentSplitter::AddLine(std::string_view line) {
  std::optional<Chunk> done;
  if (IsMarker(line, "---")) {
    done = Close();
    // Content after `--- ` on the same line belongs to the new document.
    current_ = Chunk{std::string(line.substr(3)) + "\n", line_no_, 3, true};
  } else if (IsMarker(line, "...")) {
    done = Close();
    current_ = Chunk{"", line_no_ + 1};
  } else if (!current_.oversized) {
    if (current_.text.empty() && !current_.explicit_start) current_.first_line = line_no_;
    if (current_.text.size() + line.size() + 1 > max_bytes_) {
      // Its text is dropped at once: holding it is what the cap prevents.
      current_.oversized = true;
      current_.text.clear();
      current_.text.shrink_to_fit();
    } else {
      current_.text.append(line);
      current_.text.push_back('\n');
    }
  }
  ++line_no_;
  return done;
}

std::optional<Chunk> DocumentSplitter::Finish() {
  auto done = Close();
  current_ = Chunk{"", line_no_};
  return done;
}

std::vector<Chunk> SplitDocuments(std::string_view text, bool keep_all) {
  std::vector<Chunk> chunks;
  DocumentSplitter splitter(std::string::npos, keep_all);
  std::size_t pos = 0;
  while (true) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (auto chunk = splitter.AddLine(text.substr(pos, end - pos)))
      chunks.push_back(std::move(*chunk));
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (auto chunk = splitter.Finish()) chunks.push_back(std::move(*chunk));
  return chunks;
}

}  // namespace rw::codec
