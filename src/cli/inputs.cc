#include "inputs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace rw::cli {
namespace {

namespace fs = std::filesystem;

// Files read whole (policies) larger than this are refused rather than risking the machine.
// Manifests are streamed instead: the codec caps each document at the same size.
constexpr std::size_t kMaxInputBytes = 64u << 20;

InputDocument Unreadable(std::string source, std::string error, bool whole_file) {
  InputDocument doc;
  doc.source = std::move(source);
  doc.error = std::move(error);
  doc.whole_file = whole_file;
  return doc;
}

InputDocument FromEntry(const std::string& name, codec::StreamEntry&& entry) {
  InputDocument doc;
  doc.source = name + "#" + std::to_string(entry.doc.index);
  if (entry.item) doc.source += "/items/" + std::to_string(*entry.item);
  doc.file = name;
  doc.object = std::move(entry.doc.value);
  doc.error = std::move(entry.doc.error);
  doc.duplicate_keys = std::move(entry.doc.duplicate_keys);
  doc.positions = std::move(entry.doc.positions);
  doc.document = entry.doc.index;
  if (entry.item) doc.item = "/items/" + std::to_string(*entry.item);
  return doc;
}

// What the visitor throws is its own failure, not the file's: it must not read as "cannot
// read file".
struct VisitorFailure {
  std::exception_ptr error;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

codec::Pull PullFrom(std::FILE* f, const std::string& name) {
  return [f, name](char* buffer, std::size_t capacity) {
    const std::size_t n = std::fread(buffer, 1, capacity, f);
    if (n == 0 && std::ferror(f))
      throw std::runtime_error(name + ": read error: " + std::strerror(errno));
    return n;
  };
}

// Stdin as a file that can be read twice: itself when it is a regular file (`< file`), else a
// copy in a temporary file, which holds the bytes on disk rather than in memory.
std::FILE* RewindableStdin(File& owned) {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) return stdin;
  owned.reset(std::tmpfile());
  if (!owned) throw std::runtime_error(std::string("cannot copy stdin: ") + std::strerror(errno));
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0)
    if (std::fwrite(buffer, 1, n, owned.get()) != n)
      throw std::runtime_error(std::string("cannot copy stdin: ") + std::strerror(errno));
  if (std::ferror(stdin))
    throw std::runtime_error(std::string("read error: ") + std::strerror(errno));
  std::rewind(owned.get());
  return owned.get();
}

// A file read whole and kept: its documents carry their text as written.
void ReadFileKeepingText(const std::string& file, codec::Positions positions,
                         const DocumentVisitor& visit) {
  const std::string text = ReadFileText(file);
  const auto texts =
      std::make_shared<const std::vector<codec::DocumentText>>(codec::SplitStreamText(text));
  std::size_t offset = 0;
  const codec::Pull pull = [&](char* buffer, std::size_t capacity) {
    const std::size_t n = std::min(capacity, text.size() - offset);
    std::copy_n(text.data() + offset, n, buffer);
    offset += n;
    return n;
  };
  codec::StreamOptions options;
  options.positions = positions;
  codec::ReadStream(
      pull, [&] { offset = 0; }, options,
      [&](codec::StreamEntry&& entry) {
        InputDocument doc = FromEntry(file, std::move(entry));
        doc.texts = texts;
        try {
          visit(std::move(doc));
        } catch (...) {
          throw VisitorFailure{std::current_exception()};
        }
      });
}

void ReadFile(const std::string& file, codec::Positions positions, const DocumentVisitor& visit) {
  File owned;
  std::FILE* f = nullptr;
  long start = 0;
  if (file == "-") {
    f = RewindableStdin(owned);
    start = std::ftell(f);
    if (start < 0) start = 0;
  } else {
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw std::runtime_error("is a directory");
    owned.reset(std::fopen(file.c_str(), "rb"));
    if (!owned) throw std::runtime_error(std::string("cannot read: ") + std::strerror(errno));
    f = owned.get();
  }
  codec::StreamOptions options;
  options.positions = positions;
  const auto rewind = [f, start] {
    std::clearerr(f);
    std::fseek(f, start, SEEK_SET);
  };
  codec::ReadStream(PullFrom(f, file), rewind, options, [&](codec::StreamEntry&& entry) {
    try {
      visit(FromEntry(file, std::move(entry)));
    } catch (...) {
      throw VisitorFailure{std::current_exception()};
    }
  });
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

void ForEachDocumentOf(const std::string& name, const codec::Pull& pull, bool json_list,
                       codec::Positions positions, const DocumentVisitor& visit) {
  codec::StreamOptions options;
  options.positions = positions;
  options.json_list = json_list;
  codec::ReadStream(pull, nullptr, options,
                    [&](codec::StreamEntry&& entry) { visit(FromEntry(name, std::move(entry))); });
}

void ForEachInput(const std::vector<std::string>& args, codec::Positions positions,
                  const DocumentVisitor& visit, bool keep_text) {
  for (const auto& arg : args) {
    std::vector<std::string> files;
    std::error_code ec;
    if (arg != "-" && fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file(ec) && IsManifestFile(entry.path()))
          files.push_back(entry.path().string());
      if (ec) {
        auto doc = Unreadable(arg, "cannot list directory: " + ec.message(), true);
        doc.file = arg;
        visit(std::move(doc));
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const auto& file : files) {
      try {
        if (keep_text)
          ReadFileKeepingText(file, positions, visit);
        else
          ReadFile(file, positions, visit);
      } catch (const VisitorFailure& failure) {
        std::rethrow_exception(failure.error);
      } catch (const std::exception& e) {
        std::string message = e.what();
        if (message.rfind(file + ": ", 0) == 0) message.erase(0, file.size() + 2);
        auto doc = Unreadable(file, message, true);
        doc.file = file;
        visit(std::move(doc));
      }
    }
  }
}

}  // namespace rw::cli
