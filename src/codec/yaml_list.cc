// Finding the YAML `List` documents (kubectl get -o yaml) whose items can be read one at a
// time: a first pass over the stream with yaml-cpp's event parser, which builds no values, so
// the second pass knows before reading an item that the document is a List and that the
// whole-document reader would read it without error into the same items.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "byte_reader.h"
#include "stream_parts.h"

namespace rw::codec {
namespace {

// A line that is only a sequence dash or a `?` (with maybe a comment): the node it starts is on
// a later line, which an item cut at its first key's line would split from its indicator.
bool IndicatorAlone(std::string_view line) {
  const auto first = line.find_first_not_of(' ');
  if (first == std::string_view::npos || (line[first] != '-' && line[first] != '?')) return false;
  const auto next = line.find_first_not_of(" \t\r", first + 1);
  return next == std::string_view::npos || (next > first + 1 && line[next] == '#');
}

// Only blank or a comment.
bool CommentOrBlank(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  return first == std::string_view::npos || line[first] == '#';
}

// The lines of one document at a time, cut as DocumentSplitter cuts them.
class DocumentLines {
 public:
  DocumentLines(ByteReader& in, std::size_t max_bytes) : in_(in), max_bytes_(max_bytes) {}

  // Starts the next document; false when the stream has ended.
  bool Begin() {
    if (at_end_) return false;
    ended_ = nonblank_ = explicit_ = false;
    empty_ = true;
    pending_ = false;
    if (marker_.empty()) {
      first_line_ = line_no_;
    } else if (IsMarker(marker_, "---")) {
      explicit_ = true;
      first_line_ = marker_line_;
      line_ = marker_.substr(3);
      pending_ = true;  // the text after `---` is the document's first line
      empty_ = false;
    } else {
      first_line_ = marker_line_ + 1;
    }
    marker_.clear();
    return true;
  }

  // The document's next line and its number; false at its end. `truncated`: longer than the cap.
  bool Next(std::string_view& line, std::size_t& number, bool& truncated) {
    truncated = false;
    if (pending_) {
      pending_ = false;
      number = first_line_;
      return Take(line);
    }
    if (ended_) return false;
    if (!in_.ReadLine(line_, max_bytes_, truncated)) {
      ended_ = at_end_ = true;
      end_line_ = line_no_;
      return false;
    }
    number = line_no_++;
    if (IsMarker(line_, "---") || IsMarker(line_, "...")) {
      ended_ = true;
      end_line_ = number;
      marker_ = line_;
      marker_line_ = number;
      return false;
    }
    if (empty_ && !explicit_) first_line_ = number;
    empty_ = false;
    return Take(line);
  }

  std::size_t first_line() const { return first_line_; }
  std::size_t end_line() const { return end_line_; }  // the marker's line, or past the last
  bool is_document() const { return explicit_ || nonblank_; }

 private:
  bool Take(std::string_view& line) {
    if (!Blank(line_)) nonblank_ = true;
    line = line_;
    return true;
  }

  ByteReader& in_;
  std::size_t max_bytes_;
  std::string line_, marker_;
  std::size_t line_no_ = 1, marker_line_ = 0, first_line_ = 1, end_line_ = 1;
  bool at_end_ = false, ended_ = false, nonblank_ = false, explicit_ = false, empty_ = true;
  bool pending_ = false;
};

// The shape of one document from its parse events: whether it is a streamable List, and
// where its items start (lines and positions relative to the document's text).
class ListShape : public YAML::EventHandler {
 public:
  // `list_root`: the document's root is the List (its keys are followed), else a List item.
  explicit ListShape(bool list_root) : list_root_(list_root) {}
  struct Item {
    int line, column;
  };
  bool ok = true, kind_list = false, items_seen = false;
  std::vector<Item> items;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Node(mark, "?", anchor, kScalar, YAML::EmitterStyle::Default, "");
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { ok = false; }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Node(mark, tag, anchor, kScalar, YAML::EmitterStyle::Default, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Node(mark, tag, anchor, kSequence, style, "");
  }
  void OnSequenceEnd() override { Pop(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Node(mark, tag, anchor, kMap, style, "");
  }
  void OnMapEnd() override { Pop(); }

 private:
  enum Type { kScalar, kSequence, kMap };
  enum class Key { kOther, kItems, kKind };
  struct Frame {
    bool map;
    bool key_next = true;
    bool items = false;
  };

  void Node(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor, Type type,
            YAML::EmitterStyle::value style, const std::string& value) {
    if (anchor != YAML::NullAnchor || !(tag.empty() || tag == "?" || tag == "!")) ok = false;
    // The item is read at depth 0, not 2: leave room for the checks the whole reader makes.
    if (stack_.size() + 4 > kMaxNestingDepth) ok = false;
    const bool block = style != YAML::EmitterStyle::Flow;
    bool is_items = false;
    if (stack_.empty()) {
      if (type != kMap || !block) ok = false;
    } else if (Frame& f = stack_.back(); f.map && f.key_next) {
      f.key_next = false;
      if (type != kScalar || value == "<<") ok = false;
      if (list_root_ && stack_.size() == 1) RootKey(value);
    } else if (f.map) {
      f.key_next = true;
      if (stack_.size() == 1 && key_ == Key::kItems) {
        if (type != kSequence || !block) ok = false;
        is_items = true;
      } else if (stack_.size() == 1 && key_ == Key::kKind) {
        kind_list = type == kScalar && value == "List";
      }
    } else if (f.items) {
      if (type != kMap || !block) ok = false;
      items_.push_back({mark.line, mark.column});
    }
    if (type != kScalar) stack_.push_back({type == kMap, true, is_items});
  }

  void RootKey(const std::string& key) {
    key_ = key == "items" ? Key::kItems : key == "kind" ? Key::kKind : Key::kOther;
    if (key_ == Key::kItems) {
      if (items_seen) ok = false;  // a repeated key: the last wins, left to the whole reader
      items_seen = true;
    } else if (key_ == Key::kKind) {
      if (kind_seen_) ok = false;
      kind_seen_ = true;
    }
  }

  void Pop() {
    if (stack_.empty()) return;
    if (stack_.back().items) {
      items = std::move(items_);
    }
    stack_.pop_back();
  }

  bool list_root_;
  std::vector<Frame> stack_;
  std::vector<Item> items_;
  Key key_ = Key::kOther;
  bool kind_seen_ = false;
};

// Parses `text` as exactly one YAML document into `shape`.
bool ParseOne(const std::string& text, ListShape& shape) {
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    if (!parser.HandleNextDocument(shape)) return false;
    ListShape rest(false);
    return !parser.HandleNextDocument(rest) && shape.ok;
  } catch (const std::exception&) {
    return false;
  }
}

// The List's own fields (apiVersion, kind, metadata) are kept; more than this and the document
// is no List worth streaming.
constexpr std::size_t kMaxSkeletonBytes = std::size_t{1} << 20;

// One document, line by line: its items are cut at each dash in the items' column (kubectl
// writes them at column 0, others at 2) and each is parsed alone, as a mapping at the column
// where it stands; the rest, with one placeholder item, is parsed to learn that it is a List and
// that the items are exactly its `items` sequence. Only the line numbers of the items are kept.
class ListScan {
 public:
  explicit ListScan(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  void Line(std::string_view line, std::size_t number, bool truncated) {
    if (!ok_) return;
    const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
    if (truncated || InvalidUtf8At(line) != std::string_view::npos ||
        line.find('\0') != line.npos || (!line.empty() && line[0] == '%') ||
        (indent < line.size() && line[indent] == '\t') || IndicatorAlone(line)) {
      Fail();
      return;
    }
    const bool dash = indent + 1 < line.size() && line[indent] == '-' && line[indent + 1] == ' ';
    switch (state_) {
      case State::kRoot:
        Skeleton(line);
        if (line.substr(0, 6) == "items:" && CommentOrBlank(line.substr(6))) state_ = State::kKey;
        return;
      case State::kKey:
        if (CommentOrBlank(line)) {
          Skeleton(line);
        } else if (dash) {
          dash_ = indent;
          placeholder_ = lines_;
          Skeleton(std::string(dash_, ' ') + "- x: 0");
          state_ = State::kItems;
          StartItem(line, number);
        } else {
          Fail();  // `items:` is no block sequence here
        }
        return;
      case State::kItems:
        if (CommentOrBlank(line) || indent > dash_) {
          item_.append(line);
          item_.push_back('\n');
          if (item_.size() > max_bytes_) Fail();
        } else if (indent == dash_ && dash) {
          EndItem();
          StartItem(line, number);
        } else {
          EndItem();
          end_line_ = number;
          state_ = State::kAfter;
          Skeleton(line);
        }
        return;
      case State::kAfter:
        Skeleton(line);
        return;
    }
  }

  std::optional<YamlListPlan> Finish(std::size_t index, std::size_t first_line,
                                     std::size_t end_line) {
    if (ok_ && state_ == State::kItems) {
      EndItem();
      end_line_ = end_line;
    } else if (state_ != State::kAfter) {
      return std::nullopt;
    }
    if (!ok_) return std::nullopt;
    ListShape shape(true);
    if (!ParseOne(skeleton_, shape) || !shape.kind_list || shape.items.size() != 1 ||
        shape.items[0].line != static_cast<int>(placeholder_) ||
        shape.items[0].column != static_cast<int>(dash_ + 2))
      return std::nullopt;
    return YamlListPlan{index, first_line, std::move(items_), end_line_};
  }

 private:
  enum class State { kRoot, kKey, kItems, kAfter };

  void Fail() {
    ok_ = false;
    std::string().swap(skeleton_);
    std::string().swap(item_);
  }

  void Skeleton(std::string_view line) {
    if (!ok_) return;
    skeleton_.append(line);
    skeleton_.push_back('\n');
    ++lines_;
    if (skeleton_.size() > kMaxSkeletonBytes) Fail();
  }

  void StartItem(std::string_view line, std::size_t number) {
    const std::size_t column = line.find_first_not_of(' ', dash_ + 1);
    items_.push_back({number, column});
    item_.assign(column, ' ');
    item_.append(line.substr(column));
    item_.push_back('\n');
  }

  void EndItem() {
    if (!ok_) return;
    ListShape shape(false);
    if (item_.size() > max_bytes_ || !ParseOne(item_, shape)) Fail();
    item_.clear();
  }

  std::size_t max_bytes_;
  State state_ = State::kRoot;
  bool ok_ = true;
  std::string skeleton_, item_;
  std::size_t lines_ = 0, placeholder_ = 0, dash_ = 0, end_line_ = 0;
  std::vector<YamlListPlan::Item> items_;
};

}  // namespace

std::vector<YamlListPlan> PlanYamlLists(ByteReader& in, std::size_t max_document_bytes) {
  std::vector<YamlListPlan> plans;
  DocumentLines lines(in, max_document_bytes);
  std::size_t index = 0;
  while (lines.Begin()) {
    ListScan scan(max_document_bytes);
    std::string_view line;
    std::size_t number = 0;
    bool truncated = false;
    while (lines.Next(line, number, truncated)) scan.Line(line, number, truncated);
    if (!lines.is_document()) continue;
    const std::size_t doc_index = index++;
    if (auto plan = scan.Finish(doc_index, lines.first_line(), lines.end_line()))
      plans.push_back(std::move(*plan));
  }
  return plans;
}

}  // namespace rw::codec
