#include <cctype>

#include "rdma_webhook/nccl/grammar.h"

namespace rw::nccl {
namespace {

// Splits shell text into words, honouring quotes; `;`, `&&`, `|` and newlines end a word.
std::vector<std::string> ShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool has_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word.push_back(text[++i]);
      } else {
        word.push_back(c);
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      has_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word.push_back(text[++i]);
      has_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) || c == ';' || c == '&' || c == '|') {
      if (has_word) words.push_back(std::move(word));
      word.clear();
      has_word = false;
      if (c == ';' || c == '&' || c == '|' || c == '\n') words.emplace_back(";");
    } else {
      word.push_back(c);
      has_word = true;
    }
  }
  if (has_word) words.push_back(std::move(word));
  return words;
}

bool ValidEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// `top` is the argv element the words come from (depth > 0), else each word is its own.
void Scan(const std::vector<std::string>& words, std::vector<LauncherAssignment>& out, int depth,
          std::size_t top) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const auto at = [&](std::size_t word) { return depth == 0 ? word : top; };
    if (w == "-x" && i + 1 < words.size()) {
      const std::string& a = words[i + 1];
      const std::size_t eq = a.find('=');
      if (eq != std::string::npos && ValidEnvName(std::string_view(a).substr(0, eq)))
        out.push_back({a.substr(0, eq), a.substr(eq + 1), "-x", at(i + 1)});
      ++i;
    } else if (w == "export") {
      for (std::size_t j = i + 1; j < words.size() && words[j] != ";"; ++j) {
        const std::string& a = words[j];
        const std::size_t eq = a.find('=');
        if (eq != std::string::npos && ValidEnvName(std::string_view(a).substr(0, eq)))
          out.push_back({a.substr(0, eq), a.substr(eq + 1), "export", at(j)});
        i = j;
      }
    } else if (depth < 2 && w.find_first_of(" \n;") != std::string::npos) {
      // An argument holding a script (`bash -c "..."`): read its words too.
      Scan(ShellWords(w), out, depth + 1, at(i));
    }
  }
}

}  // namespace

std::vector<LauncherAssignment> ParseLauncherArgs(const std::vector<std::string>& argv) {
  std::vector<LauncherAssignment> out;
  Scan(argv, out, 0, 0);
  return out;
}

}  // namespace rw::nccl
