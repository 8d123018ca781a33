#include "rdma_webhook/codec/yaml_layout.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <vector>

namespace rw::codec {
namespace {

using nlohmann::json;

// Past this many nodes compared or built (aliases can multiply a small text), give up.
constexpr std::size_t kMaxNodes = 500'000;
// Past this many comment candidates that the quick check could not settle, keep none.
constexpr std::size_t kMaxCommentChecks = 64;
// ToYaml writes longer keys as explicit `? key` keys; this renderer does not.
constexpr std::size_t kMaxKeySize = 128;

struct Entry;

// A value as it will be written. Scalars hold the reader's value; collections their entries.
struct Node {
  enum class Kind { kScalar, kMap, kSeq } kind = Kind::kScalar;
  json scalar;
  std::vector<Entry> entries;  // a mapping's members or a sequence's items, in order
  // How a string was written: '|' block scalar (`|` or `>`), '"' or '\'' quoted, 'p' plain;
  // 0 for anything else (a tag, an alias, a value the patch brought).
  char style = 0;
  bool flow = false;  // written as a flow collection (`[a, b]`)
  int indent = -1;    // mapping: members' extra indent; sequence: the dashes'; -1 default
};

struct Entry {
  std::string key;  // mappings only
  Node value;
  std::vector<std::string> before;  // comment lines before it
  std::string eol;                  // a comment at the end of its line
};

struct Comment {
  int line = 0;  // 0-based line of the document's text
  std::string text;
  bool full_line = true;
  std::size_t cut = 0;  // where the comment (and the blanks before it) starts on its line
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::string RightTrimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

// Where a `#` starts a comment on a line that holds content, judged by quotes alone; the
// reader's verdict is taken afterwards (CommentsOf).
std::optional<std::size_t> EndOfLineComment(const std::string& line) {
  bool single = false, dbl = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const char prev = i == 0 ? ' ' : line[i - 1];
    if (dbl) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        dbl = false;
      }
    } else if (single) {
      if (c == '\'') single = false;  // `''` closes and opens again: the same state
    } else if (c == '"' && std::string_view(" \t:[{,-").find(prev) != std::string_view::npos) {
      dbl = true;
    } else if (c == '\'' && std::string_view(" \t:[{,-").find(prev) != std::string_view::npos) {
      single = true;
    } else if (c == '#' && (prev == ' ' || prev == '\t')) {
      std::size_t cut = i;
      while (cut > 0 && (line[cut - 1] == ' ' || line[cut - 1] == '\t')) --cut;
      return cut;
    }
  }
  return std::nullopt;
}

bool Same(const YAML::Node& a, const YAML::Node& b, std::size_t& budget) {
  if (budget-- == 0) return false;
  if (a.Type() != b.Type() || a.Tag() != b.Tag()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      auto i = a.begin(), j = b.begin();
      for (; i != a.end() && j != b.end(); ++i, ++j) {
        if (a.IsSequence()) {
          if (!Same(*i, *j, budget)) return false;
        } else if (!Same(i->first, j->first, budget) || !Same(i->second, j->second, budget)) {
          return false;
        }
      }
      return true;
    }
    default:
      return true;
  }
}

// Whether the text with `lines` in place of its own reads as the same node tree.
bool ReadsTheSame(const YAML::Node& root, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  try {
    std::size_t budget = kMaxNodes;
    return Same(root, YAML::Load(text), budget);
  } catch (const std::exception&) {
    return false;
  }
}

// The comments of a document: what looks like one and, taken out, leaves the same document.
std::vector<Comment> CommentsOf(const YAML::Node& root, const std::vector<std::string>& lines) {
  std::vector<Comment> candidates;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      candidates.push_back({static_cast<int>(i), RightTrimmed(line.substr(first)), true, 0});
    } else if (const auto cut = EndOfLineComment(line)) {
      // The blanks before it are kept with it, so it stays where it was against the value.
      candidates.push_back({static_cast<int>(i), RightTrimmed(line.substr(*cut)), false, *cut});
    }
  }
  if (candidates.empty()) return candidates;
  auto without = [&](const std::vector<const Comment*>& taken) {
    std::vector<std::string> stripped = lines;
    for (const Comment* c : taken) stripped[static_cast<std::size_t>(c->line)].erase(c->cut);
    return stripped;
  };
  std::vector<const Comment*> all;
  for (const auto& c : candidates) all.push_back(&c);
  if (ReadsTheSame(root, without(all))) return candidates;
  if (candidates.size() > kMaxCommentChecks) return {};
  std::vector<Comment> comments;
  for (const auto& c : candidates)
    if (ReadsTheSame(root, without({&c}))) comments.push_back(c);
  return comments;
}

// The comments and the blank lines (empty text) of a document, in line order.
std::vector<Comment> CommentsAndBlankLines(const YAML::Node& root,
                                           const std::vector<std::string>& lines) {
  std::vector<Comment> out = CommentsOf(root, lines);
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos)
      out.push_back({static_cast<int>(i), "", true, 0});
  std::stable_sort(out.begin(), out.end(),
                   [](const Comment& a, const Comment& b) { return a.line < b.line; });
  return out;
}

int MarkLine(const YAML::Node& node) { return node.Mark().line; }
int MarkColumn(const YAML::Node& node) { return node.Mark().column; }

Node FromJson(const json& value) {
  Node n;
  if (value.is_object()) {
    n.kind = Node::Kind::kMap;
    for (auto it = value.begin(); it != value.end(); ++it)
      n.entries.push_back({it.key(), FromJson(it.value()), {}, {}});
  } else if (value.is_array()) {
    n.kind = Node::Kind::kSeq;
    for (const auto& item : value) n.entries.push_back({"", FromJson(item), {}, {}});
  } else {
    n.scalar = value;
  }
  return n;
}

// Builds the layout tree of a yaml-cpp node whose reader value is `value`, handing out the
// comments in line order: a comment line goes before the next entry, an end-of-line comment to
// the first entry that ends on its line.
class Builder {
 public:
  Builder(const std::vector<std::string>& lines, const std::vector<Comment>& comments, int first,
          int last)
      : lines_(lines) {
    for (const auto& c : comments) {
      if (c.line < first || c.line > last) continue;
      if (c.full_line) {
        full_.push_back(&c);
      } else {
        eol_[c.line] = c.text;
      }
    }
  }

  bool Build(const YAML::Node& y, const json& value, int key_column, Node& out) {
    if (++nodes_ > kMaxNodes) return false;
    if (value.is_object()) return BuildMap(y, value, key_column, out);
    if (value.is_array()) {
      if (!y.IsSequence() || y.size() != value.size()) return false;
      out.kind = Node::Kind::kSeq;
      out.flow = y.Style() == YAML::EmitterStyle::Flow;
      out.entries.resize(value.size());
      std::size_t i = 0;
      for (const auto& item : y) {
        if (i == 0 && key_column >= 0 && !out.flow)
          out.indent = std::max(0, MarkColumn(item) - 2 - key_column);
        Entry& e = out.entries[i];
        Open(e, MarkLine(item));
        if (!Build(item, value[i], -1, e.value)) return false;
        Close(e, MarkLine(item));
        ++i;
      }
      return true;
    }
    if (y.IsMap() || y.IsSequence()) return false;
    out.scalar = value;
    const int line = MarkLine(y), column = MarkColumn(y);
    const auto at_line = static_cast<std::size_t>(line),
               at_column = static_cast<std::size_t>(column);
    if (value.is_string() && line >= 0 && at_line < lines_.size() && column >= 0 &&
        at_column < lines_[at_line].size()) {
      const char c = lines_[at_line][at_column];
      if (c == '|' || c == '>') {
        out.style = '|';
        after_block_ = true;  // blank lines up to the next entry may be its content
      } else if (c == '"' || c == '\'') {
        out.style = c;
      } else if (std::string_view("!&*").find(c) == std::string_view::npos) {
        out.style = 'p';
      }
    }
    return true;
  }

  std::vector<std::string> Rest() {
    std::vector<std::string> rest;
    for (; next_ < full_.size(); ++next_)
      if (!full_[next_]->text.empty() || !after_block_) rest.push_back(full_[next_]->text);
    while (!rest.empty() && rest.back().empty()) rest.pop_back();
    return rest;
  }

 private:
  bool BuildMap(const YAML::Node& y, const json& value, int key_column, Node& out) {
    if (!y.IsMap()) return false;
    out.kind = Node::Kind::kMap;
    out.flow = y.Style() == YAML::EmitterStyle::Flow;
    // The explicit keys, each at its first place, with the node of its last (winning) value.
    std::vector<std::pair<std::string, std::pair<YAML::Node, YAML::Node>>> keys;
    std::map<std::string, std::size_t> where;
    std::size_t merge_at = std::string::npos;
    for (const auto& kv : y) {
      if (!kv.first.IsScalar()) return false;
      const std::string& key = kv.first.Scalar();
      if (key == "<<" && kv.first.Tag() != "!") {
        if (merge_at == std::string::npos) merge_at = keys.size();
        continue;
      }
      if (const auto it = where.find(key); it != where.end()) {
        keys[it->second].second.second.reset(kv.second);  // operator= would write through
      } else {
        where[key] = keys.size();
        keys.push_back({key, {kv.first, kv.second}});
      }
    }
    std::vector<std::string> merged;  // keys only a `<<` brought in
    for (auto it = value.begin(); it != value.end(); ++it)
      if (where.count(it.key()) == 0) merged.push_back(it.key());
    if (keys.size() + merged.size() != value.size()) return false;
    out.entries.reserve(value.size());
    auto add_merged = [&] {
      for (const auto& key : merged) out.entries.push_back({key, FromJson(value[key]), {}, {}});
      merged.clear();
    };
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i == merge_at) add_merged();
      const auto& [key, nodes] = keys[i];
      if (!value.contains(key)) return false;
      if (out.entries.empty() && key_column >= 0 && !out.flow)
        out.indent = std::max(1, MarkColumn(nodes.first) - key_column);
      out.entries.push_back({key, {}, {}, {}});
      Entry& e = out.entries.back();
      Open(e, MarkLine(nodes.first));
      if (!Build(nodes.second, value[key], MarkColumn(nodes.first), e.value)) return false;
      Close(e, MarkLine(nodes.first));
    }
    add_merged();
    return true;
  }

  // A blank line is kept before the entry that follows it, unless a block scalar comes before
  // it (a blank line there may be its content, and stays inside it).
  void Open(Entry& e, int line) {
    for (; next_ < full_.size() && full_[next_]->line < line; ++next_)
      if (!full_[next_]->text.empty() || !after_block_) e.before.push_back(full_[next_]->text);
    after_block_ = false;
  }

  void Close(Entry& e, int line) {
    if (const auto it = eol_.find(line); it != eol_.end()) {
      e.eol = it->second;
      eol_.erase(it);
    }
  }

  const std::vector<std::string>& lines_;
  std::vector<const Comment*> full_;
  std::size_t next_ = 0;
  std::map<int, std::string> eol_;
  std::size_t nodes_ = 0;
  bool after_block_ = false;
};

// RFC 6901 tokens of a pointer.
std::vector<std::string> Tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = std::min(pointer.find('/', pos), pointer.size());
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token.push_back(pointer[i + 1] == '1' ? '/' : '~');
        ++i;
      } else {
        token.push_back(pointer[i]);
      }
    }
    tokens.push_back(std::move(token));
    if (end == pointer.size()) break;
    pos = end + 1;
  }
  return tokens;
}

std::optional<std::size_t> Index(const std::string& token, std::size_t size) {
  if (token.empty() || token.size() > 9 ||
      !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      (token.size() > 1 && token[0] == '0'))
    return std::nullopt;
  const std::size_t i = std::stoul(token);
  if (i >= size) return std::nullopt;
  return i;
}

Entry* Member(Node& map, const std::string& key) {
  for (auto& e : map.entries)
    if (e.key == key) return &e;
  return nullptr;
}

// Applies one add, replace or remove; false for anything else or a path that is not there.
bool Apply(Node& root, const json& op) {
  if (!op.is_object() || !op.contains("op") || !op.contains("path")) return false;
  const std::string kind = op["op"].get<std::string>();
  auto tokens = Tokens(op["path"].get<std::string>());
  if (kind != "add" && kind != "replace" && kind != "remove") return false;
  if (kind != "remove" && !op.contains("value")) return false;
  if (tokens.empty()) {
    if (kind == "remove") return false;
    root = FromJson(op["value"]);
    return true;
  }
  const std::string last = tokens.back();
  tokens.pop_back();
  Node* parent = &root;
  for (const auto& t : tokens) {
    if (parent->kind == Node::Kind::kMap) {
      Entry* e = Member(*parent, t);
      if (e == nullptr) return false;
      parent = &e->value;
    } else if (parent->kind == Node::Kind::kSeq) {
      const auto i = Index(t, parent->entries.size());
      if (!i) return false;
      parent = &parent->entries[*i].value;
    } else {
      return false;
    }
  }
  if (parent->kind == Node::Kind::kMap) {
    Entry* e = Member(*parent, last);
    if (kind == "remove") {
      if (e == nullptr) return false;
      parent->entries.erase(parent->entries.begin() + (e - parent->entries.data()));
    } else if (e != nullptr) {
      e->value = FromJson(op["value"]);
    } else if (kind == "add") {
      parent->entries.push_back({last, FromJson(op["value"]), {}, {}});
    } else {
      return false;
    }
    return true;
  }
  if (parent->kind != Node::Kind::kSeq) return false;
  auto& items = parent->entries;
  if (kind == "add") {
    const auto i = last == "-" ? std::optional(items.size()) : Index(last, items.size() + 1);
    if (!i) return false;
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(*i),
                 Entry{"", FromJson(op["value"]), {}, {}});
    return true;
  }
  const auto i = Index(last, items.size());
  if (!i) return false;
  if (kind == "remove") {
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(*i));
  } else {
    items[*i].value = FromJson(op["value"]);
  }
  return true;
}

// How the renderer may write what it writes: `plain` turns off the styles kept from the text
// (block scalars, flow lists), the second try when a styled rendering does not read back.
class Writer {
 public:
  Writer(bool plain, int seq_indent) : plain_(plain), seq_indent_(seq_indent) {}

  bool Document(const Node& root, const std::vector<std::string>& after, std::string& out) {
    ok_ = true;
    if (root.kind == Node::Kind::kScalar || Inline(root)) {
      out += Scalarish(root) + "\n";
    } else if (root.kind == Node::Kind::kMap) {
      for (std::size_t i = 0; i < root.entries.size(); ++i) Member(root.entries[i], 0, out);
    } else {
      for (const auto& e : root.entries) Item(e, 0, out);
    }
    for (const auto& c : after) out += c + "\n";
    return ok_;
  }

 private:
  static std::string Spaces(int n) { return std::string(static_cast<std::size_t>(n), ' '); }

  static std::string Text(const json& scalar) {
    std::string s = ToYaml(scalar);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  // A flow collection of scalars: every string JSON-quoted unless plainly safe in flow context.
  static bool FlowSafe(const std::string& s) {
    return !s.empty() && s.find_first_of(",[]{}#:&*!|>'\"%@`\\ \t") == std::string::npos &&
           Text(json(s)) == s;
  }
  bool Inline(const Node& n) const {
    if (n.kind == Node::Kind::kScalar) return false;
    if (n.entries.empty()) return true;
    if (plain_ || !n.flow) return false;
    for (const auto& e : n.entries)
      if (e.value.kind != Node::Kind::kScalar || !e.before.empty() || !e.eol.empty() ||
          (n.kind == Node::Kind::kMap && !FlowSafe(e.key)))
        return false;
    return true;
  }

  std::string Scalarish(const Node& n) const {
    if (n.kind == Node::Kind::kScalar) return Styled(n, /*flow=*/false);
    const bool map = n.kind == Node::Kind::kMap;
    if (n.entries.empty()) return map ? "{}" : "[]";
    std::string s = map ? "{" : "[";
    for (std::size_t i = 0; i < n.entries.size(); ++i) {
      if (i > 0) s += ", ";
      if (map) s += n.entries[i].key + ": ";
      s += Styled(n.entries[i].value, /*flow=*/true);
    }
    return s + (map ? "}" : "]");
  }

  static std::string Eol(const std::string& eol) {
    return eol.empty() || eol[0] == ' ' || eol[0] == '\t' ? eol : "  " + eol;
  }

  // A scalar in the quotes it was written with (plain, '...' or "..."); Text for the others.
  std::string Styled(const Node& n, bool flow) const {
    if (!n.scalar.is_string()) return Text(n.scalar);
    const auto& s = n.scalar.get_ref<const std::string&>();
    const bool control = std::any_of(s.begin(), s.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (plain_ || control || n.style == 0 || n.style == '|')
      return flow && !FlowSafe(s) ? n.scalar.dump() : Text(n.scalar);
    if (n.style == '"') return n.scalar.dump();  // JSON's escapes are YAML's
    if (n.style == '\'') {
      std::string quoted = "'";
      for (char c : s) quoted += c == '\'' ? std::string("''") : std::string(1, c);
      return quoted + "'";
    }
    return s;  // plain where it was plain: reads back the same in the same context
  }

  // What follows `key:` or `-`: the value on this line, or the line's end and the value below.
  void Value(const Node& n, const std::string& eol, int indent, std::string& out) {
    if (n.kind == Node::Kind::kScalar && n.style == '|' && !plain_ && n.scalar.is_string() &&
        n.scalar.get_ref<const std::string&>().find('\n') != std::string::npos &&
        Literal(n, eol, indent, out))
      return;
    if (n.kind == Node::Kind::kScalar) {
      out += " " + Styled(n, /*flow=*/false) + Eol(eol) + "\n";
      return;
    }
    if (Inline(n)) {
      out += " " + Scalarish(n) + Eol(eol) + "\n";
      return;
    }
    out += Eol(eol) + "\n";
    if (n.kind == Node::Kind::kMap) {
      const int step = n.indent > 0 ? n.indent : 2;
      for (const auto& e : n.entries) Member(e, indent + step, out);
    } else {
      const int step = n.indent >= 0 ? n.indent : seq_indent_;
      for (const auto& e : n.entries) Item(e, indent + step, out);
    }
  }

  // `|` with its chomping and, when the text starts with a blank, its indentation indicator.
  bool Literal(const Node& n, const std::string& eol, int indent, std::string& out) {
    const auto& s = n.scalar.get_ref<const std::string&>();
    for (char c : s)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return false;
    std::string body = s;
    std::string chomp = "-";
    if (!body.empty() && body.back() == '\n') {
      body.pop_back();
      chomp = (!body.empty() && body.back() == '\n') ? "+" : "";
    }
    const bool indicator = body.empty() || body[0] == ' ' || body[0] == '\n';
    out += " |" + std::string(indicator ? "2" : "") + chomp + Eol(eol) + "\n";
    std::size_t pos = 0;
    while (true) {
      const std::size_t end = std::min(body.find('\n', pos), body.size());
      const std::string line = body.substr(pos, end - pos);
      out += (line.empty() ? "" : Spaces(indent + 2) + line) + "\n";
      if (end == body.size()) break;
      pos = end + 1;
    }
    return true;
  }

  void Comments(const std::vector<std::string>& lines, int indent, std::string& out) {
    for (const auto& c : lines) out += (c.empty() ? "" : Spaces(indent) + c) + "\n";
  }

  void Member(const Entry& e, int indent, std::string& out, bool after_dash = false) {
    if (e.key.size() > kMaxKeySize) ok_ = false;
    if (!after_dash) {
      Comments(e.before, indent, out);
      out += Spaces(indent);
    }
    out += Text(json(e.key)) + ":";
    Value(e.value, e.eol, indent, out);
  }

  void Item(const Entry& e, int indent, std::string& out) {
    const Node& n = e.value;
    Comments(e.before, indent, out);
    if (n.kind == Node::Kind::kMap && !Inline(n) && e.eol.empty() &&
        n.entries.front().before.empty()) {
      out += Spaces(indent) + "- ";
      for (std::size_t i = 0; i < n.entries.size(); ++i)
        Member(n.entries[i], indent + 2, out, /*after_dash=*/i == 0);
      return;
    }
    out += Spaces(indent) + "-";
    if (n.kind == Node::Kind::kMap && !Inline(n)) {
      out += Eol(e.eol) + "\n";
      for (const auto& m : n.entries) Member(m, indent + 2, out);
      return;
    }
    if (n.kind == Node::Kind::kSeq && !Inline(n)) {
      out += Eol(e.eol) + "\n";
      for (const auto& m : n.entries) Item(m, indent + 2, out);
      return;
    }
    Value(n, e.eol, indent, out);
  }

  bool plain_;
  int seq_indent_;
  bool ok_ = true;
};

// The dash indentation of the first block sequence under a key, for sequences the patch adds.
int SeqIndentOf(const Node& n) {
  for (const auto& e : n.entries) {
    if (e.value.kind == Node::Kind::kSeq && e.value.indent >= 0 && !e.value.flow)
      return e.value.indent;
    if (const int i = SeqIndentOf(e.value); i >= 0) return i;
  }
  return -1;
}

}  // namespace

struct YamlLayout::Impl {
  bool json = false;  // JSON text: its quotes and braces are JSON's, not a YAML writer's choice
  std::vector<std::string> lines;
  YAML::Node root;
  std::vector<Comment> comments;
};

std::optional<YamlLayout> YamlLayout::Read(const DocumentText& document) {
  auto impl = std::make_shared<Impl>();
  try {
    impl->root = YAML::Load(document.body);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  impl->lines = Lines(document.body);
  const auto first = document.body.find_first_not_of(" \t\r\n");
  impl->json = document.json || (first != std::string::npos &&
                                 (document.body[first] == '{' || document.body[first] == '['));
  if (!document.json) impl->comments = CommentsAndBlankLines(impl->root, impl->lines);
  return YamlLayout(std::move(impl));
}

std::optional<std::string> YamlLayout::Render(std::string_view pointer, const json& original,
                                              const json& patch, const json& expected) const {
  try {
    return RenderOrThrow(pointer, original, patch, expected);
  } catch (const std::exception&) {  // a patch of another shape, a node yaml-cpp refuses
    return std::nullopt;
  }
}

std::optional<std::string> YamlLayout::RenderOrThrow(std::string_view pointer, const json& original,
                                                     const json& patch,
                                                     const json& expected) const {
  if (!patch.is_array()) return std::nullopt;
  // The node at the pointer, and the lines its comments may come from.
  YAML::Node node = impl_->root;
  int first = 0, last = static_cast<int>(impl_->lines.size());
  for (const auto& token : Tokens(pointer)) {
    if (node.IsMap()) {
      bool found = false;
      YAML::Node value;
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && kv.first.Scalar() == token) {
          value.reset(kv.second);  // the last one wins, as in the reader
          found = true;
        }
      }
      if (!found) return std::nullopt;
      node.reset(value);
    } else if (node.IsSequence()) {
      const auto i = Index(token, node.size());
      if (!i) return std::nullopt;
      const YAML::Node& items = node;
      first = MarkLine(items[*i]);
      last = *i + 1 < items.size() ? MarkLine(items[*i + 1]) - 1 : last;
      node.reset(items[*i]);
    } else {
      return std::nullopt;
    }
  }
  Node root;
  std::vector<std::string> after;
  Builder builder(impl_->lines, impl_->comments, first, last);
  if (!builder.Build(node, original, -1, root)) return std::nullopt;
  if (pointer.empty()) after = builder.Rest();
  for (const auto& op : patch)
    if (!Apply(root, op)) return std::nullopt;
  const int written = SeqIndentOf(root);
  const int seq_indent = written >= 0 ? written : 2;
  for (const bool plain : {impl_->json, true}) {
    std::string text;
    if (!Writer(plain, seq_indent).Document(root, after, text)) return std::nullopt;
    const auto docs = ParseStream(text, DuplicateKeys::kRefuse);
    if (docs.size() == 1 && docs[0].error.empty() && docs[0].value && *docs[0].value == expected)
      return text;
  }
  return std::nullopt;
}

}  // namespace rw::codec
