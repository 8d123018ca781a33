#include "inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "rdma_webhook/codec/yaml.h"

namespace rw::cli {
namespace {

namespace fs = std::filesystem;

// Larger inputs are refused rather than risking the machine; admission objects are capped at
// a few MiB by the API server anyway.
constexpr std::size_t kMaxInputBytes = 64u << 20;

void AddDocuments(const std::string& source, const std::string& text, Inputs& out) {
  for (auto& doc : codec::ParseStream(text)) {
    const std::string where = source + "#" + std::to_string(doc.index);
    if (!doc.error.empty()) {
      out.errors.push_back({where, doc.error});
      continue;
    }
    if (!doc.value) continue;
    nlohmann::json& value = *doc.value;
    if (value.is_object() && value.contains("kind") && value["kind"] == "List" &&
        value.contains("items") && value["items"].is_array()) {
      for (std::size_t i = 0; i < value["items"].size(); ++i)
        out.documents.push_back(
            {where + "/items/" + std::to_string(i), std::move(value["items"][i])});
      continue;
    }
    out.documents.push_back({where, std::move(value)});
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

Inputs ReadInputs(const std::vector<std::string>& args) {
  Inputs out;
  for (const auto& arg : args) {
    std::vector<std::string> files;
    std::error_code ec;
    if (arg != "-" && fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file(ec) && IsManifestFile(entry.path()))
          files.push_back(entry.path().string());
      if (ec) out.errors.push_back({arg, "cannot list directory: " + ec.message()});
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const auto& file : files) {
      try {
        AddDocuments(file, ReadFileText(file), out);
      } catch (const std::exception& e) {
        std::string message = e.what();
        if (message.rfind(file + ": ", 0) == 0) message.erase(0, file.size() + 2);
        out.errors.push_back({file, message});
      }
    }
  }
  return out;
}

}  // namespace rw::cli
