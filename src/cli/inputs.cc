#include "inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include "rdma_webhook/codec/yaml.h"

namespace rw::cli {
namespace {

namespace fs = std::filesystem;

// Larger inputs are refused rather than risking the machine; admission objects are capped at
// a few MiB by the API server anyway.
constexpr std::size_t kMaxInputBytes = 64u << 20;

// The duplicates under `prefix` (a List item's pointer), rebased onto it; each source line and
// column once (an alias copying a mapping repeats its duplicates at every copy).
std::vector<codec::DuplicateKey> DuplicatesUnder(const std::vector<codec::DuplicateKey>& all,
                                                 const std::string& prefix) {
  std::vector<codec::DuplicateKey> out;
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& d : all) {
    if (d.pointer.compare(0, prefix.size(), prefix) != 0) continue;
    if (d.pointer.size() > prefix.size() && d.pointer[prefix.size()] != '/') continue;
    if (!seen.insert({d.line, d.column}).second) continue;
    codec::DuplicateKey rebased = d;
    rebased.pointer.erase(0, prefix.size());
    out.push_back(std::move(rebased));
  }
  return out;
}

// The positions under `prefix` (a List item's pointer), rebased onto it; the item's own
// position is its "".
codec::PositionMap PositionsUnder(const codec::PositionMap& all, const std::string& prefix) {
  codec::PositionMap out;
  for (auto it = all.lower_bound(prefix); it != all.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    // "/items/1/..." sorts before "/items/10": the item's own pointers are one range.
    if (it->first.size() > prefix.size() && it->first[prefix.size()] != '/') {
      if (it->first[prefix.size()] > '/') break;
      continue;
    }
    out.emplace_hint(out.end(), it->first.substr(prefix.size()), it->second);
  }
  return out;
}

InputDocument Readable(std::string source, nlohmann::json object,
                       std::vector<codec::DuplicateKey> duplicate_keys,
                       codec::PositionMap positions = {}) {
  InputDocument doc;
  doc.source = std::move(source);
  doc.object = std::move(object);
  doc.duplicate_keys = std::move(duplicate_keys);
  doc.positions = std::move(positions);
  return doc;
}

InputDocument Unreadable(std::string source, std::string error, bool whole_file) {
  InputDocument doc;
  doc.source = std::move(source);
  doc.error = std::move(error);
  doc.whole_file = whole_file;
  return doc;
}

void AddDocuments(const std::string& source, const std::string& text, codec::Positions positions,
                  bool keep_text, std::vector<InputDocument>& out) {
  const std::size_t first = out.size();
  std::shared_ptr<const std::vector<codec::DocumentText>> texts;
  if (keep_text)
    texts = std::make_shared<std::vector<codec::DocumentText>>(codec::SplitStreamText(text));
  for (auto& doc : codec::ParseStream(text, codec::DuplicateKeys::kLastWins, positions)) {
    const std::string where = source + "#" + std::to_string(doc.index);
    if (!doc.error.empty()) {
      out.push_back(Unreadable(where, doc.error, false));
      continue;
    }
    if (!doc.value) continue;
    nlohmann::json& value = *doc.value;
    if (value.is_object() && value.contains("kind") && value["kind"] == "List" &&
        value.contains("items") && value["items"].is_array()) {
      // Duplicates outside the items (in the List's own fields) belong to no result.
      for (std::size_t i = 0; i < value["items"].size(); ++i) {
        const std::string item = "/items/" + std::to_string(i);
        out.push_back(Readable(where + item, std::move(value["items"][i]),
                               DuplicatesUnder(doc.duplicate_keys, item),
                               PositionsUnder(doc.positions, item)));
        out.back().document = doc.index;
        out.back().item = item;
      }
      continue;
    }
    out.push_back(Readable(where, std::move(value), DuplicatesUnder(doc.duplicate_keys, ""),
                           std::move(doc.positions)));
    out.back().document = doc.index;
  }
  for (std::size_t i = first; i < out.size(); ++i) {
    out[i].file = source;
    out[i].texts = texts;
  }
}

bool IsManifestFile(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace

std::string ReadFileText(const std::string& path) {
  std::string text;
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    text = buffer.str();
  } else {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    const auto size = fs::file_size(path, ec);
    if (!ec && size > kMaxInputBytes)
      throw std::runtime_error(path + ": larger than " + std::to_string(kMaxInputBytes >> 20) +
                               " MiB");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
  }
  if (text.size() > kMaxInputBytes)
    throw std::runtime_error(path + ": larger than " + std::to_string(kMaxInputBytes >> 20) +
                             " MiB");
  return text;
}

std::vector<InputDocument> ReadInputs(const std::vector<std::string>& args,
                                      codec::Positions positions, bool keep_text) {
  std::vector<InputDocument> out;
  for (const auto& arg : args) {
    std::vector<std::string> files;
    std::error_code ec;
    if (arg != "-" && fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file(ec) && IsManifestFile(entry.path()))
          files.push_back(entry.path().string());
      if (ec) {
        out.push_back(Unreadable(arg, "cannot list directory: " + ec.message(), true));
        out.back().file = arg;
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const auto& file : files) {
      try {
        AddDocuments(file, ReadFileText(file), positions, keep_text, out);
      } catch (const std::exception& e) {
        std::string message = e.what();
        if (message.rfind(file + ": ", 0) == 0) message.erase(0, file.size() + 2);
        out.push_back(Unreadable(file, message, true));
        out.back().file = file;
      }
    }
  }
  return out;
}

}  // namespace rw::cli
