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

#include "rdma_webhook/server/env.h"

namespace rw::cli {
namespace {

namespace fs = std::filesystem;

// Every input, read whole or streamed, stdin and devices included, ends at server::kMaxInputBytes
// (64 MiB): `mutate /dev/zero` or `yes | check -` fail naming the input instead of growing or
// running for ever. The codec also caps each document at that size.
using server::kMaxInputBytes;

std::string TooLarge(const std::string& name) {
  return name + ": larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB";
}

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

// `pulled` counts the bytes read since the last rewind.
codec::Pull PullFrom(std::FILE* f, const std::string& name, std::shared_ptr<std::size_t> pulled) {
  return [f, name, pulled](char* buffer, std::size_t capacity) {
    const std::size_t n = std::fread(buffer, 1, capacity, f);
    if (n == 0 && std::ferror(f))
      throw std::runtime_error(name + ": read error: " + std::strerror(errno));
    *pulled += n;
    if (*pulled > kMaxInputBytes) throw std::runtime_error(TooLarge(name));
    return n;
  };
}

// Stdin as a file that can be read again: itself when it is a regular file (`< file`), else a
// copy in a temporary file, which holds the bytes on disk rather than in memory. Made once per
// process and kept: the CLI reads its inputs twice (first the cluster objects among them, then
// the workloads), and a pipe can be read only once. `start` is where stdin stood at first use.
struct StdinCopy {
  std::FILE* f = nullptr;
  long start = 0;
  File owned;
};

std::FILE* CopyStdin(File& owned) {
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) return stdin;
  owned.reset(std::tmpfile());
  if (!owned) throw std::runtime_error(std::string("cannot copy stdin: ") + std::strerror(errno));
  char buffer[1 << 16];
  std::size_t n = 0;
  std::size_t copied = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
    copied += n;
    if (copied > kMaxInputBytes) throw std::runtime_error(TooLarge("-"));
    if (std::fwrite(buffer, 1, n, owned.get()) != n)
      throw std::runtime_error(std::string("cannot copy stdin: ") + std::strerror(errno));
  }
  if (std::ferror(stdin))
    throw std::runtime_error(std::string("read error: ") + std::strerror(errno));
  std::rewind(owned.get());
  return owned.get();
}

StdinCopy& RewindableStdin() {
  static StdinCopy copy;
  if (copy.f == nullptr) {
    copy.f = CopyStdin(copy.owned);
    copy.start = std::ftell(copy.f);
    if (copy.start < 0) copy.start = 0;
  }
  return copy;
}

// All of stdin, from the copy (so that it can be read again), up to kMaxInputBytes.
std::string ReadStdin() {
  const StdinCopy& copy = RewindableStdin();
  std::clearerr(copy.f);
  std::fseek(copy.f, copy.start, SEEK_SET);
  std::string text;
  char buffer[1 << 16];
  for (std::size_t n = 0; (n = std::fread(buffer, 1, sizeof buffer, copy.f)) > 0;) {
    if (text.size() + n > kMaxInputBytes) throw std::runtime_error(TooLarge("-"));
    text.append(buffer, n);
  }
  if (std::ferror(copy.f))
    throw std::runtime_error(std::string("read error: ") + std::strerror(errno));
  return text;
}

// A file read whole and kept: its documents carry their text as written.
void ReadFileKeepingText(const std::string& file, codec::Positions positions,
                         const DocumentVisitor& visit) {
  const std::string text = file == "-" ? ReadStdin() : ReadFileText(file);
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
    const StdinCopy& copy = RewindableStdin();
    f = copy.f;
    start = copy.start;
    std::clearerr(f);
    std::fseek(f, start, SEEK_SET);
  } else {
    std::error_code ec;
    if (fs::is_directory(file, ec)) throw std::runtime_error("is a directory");
    owned.reset(std::fopen(file.c_str(), "rb"));
    if (!owned) throw std::runtime_error(std::string("cannot read: ") + std::strerror(errno));
    f = owned.get();
  }
  codec::StreamOptions options;
  options.positions = positions;
  auto pulled = std::make_shared<std::size_t>(0);
  const auto rewind = [f, start, pulled] {
    std::clearerr(f);
    std::fseek(f, start, SEEK_SET);
    *pulled = 0;
  };
  codec::ReadStream(PullFrom(f, file, pulled), rewind, options, [&](codec::StreamEntry&& entry) {
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
  return server::ReadBounded(path, server::FileKinds::kAny);
}

void ForEachDocumentOf(const std::string& name, const codec::Pull& pull, bool json_list,
                       codec::Positions positions, const DocumentVisitor& visit) {
  codec::StreamOptions options;
  options.positions = positions;
  options.json_list = json_list;
  codec::ReadStream(pull, nullptr, options,
                    [&](codec::StreamEntry&& entry) { visit(FromEntry(name, std::move(entry))); });
}

namespace {

// The manifest files of a directory; `Directories::kRecursive` descends into its
// subdirectories too (not into symlinked ones, as kubectl's -R does not: no loops). Sets `ec`
// on an unreadable directory: skipping it, a CI gate would pass on files it never read.
template <typename Iterator>
void ManifestFilesOf(const std::string& dir, std::vector<std::string>& files, std::error_code& ec) {
  for (Iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // A *.yaml symlink that dangles or loops is read, and fails naming itself (exit 2):
    // skipped, a CI gate would pass on a file it never read.
    std::error_code kind_ec;
    const bool link = it->is_symlink(kind_ec);
    const bool regular = it->is_regular_file(kind_ec);
    const bool link_to_nothing =
        link && !regular && !it->is_directory(kind_ec) && !fs::exists(it->status(kind_ec));
    if ((regular || link_to_nothing) && IsManifestFile(it->path())) {
      if (files.size() == kMaxDirectoryFiles) {
        ec = std::make_error_code(std::errc::value_too_large);
        return;
      }
      files.push_back(it->path().string());
    }
  }
}

}  // namespace

void ForEachInput(const std::vector<std::string>& args, codec::Positions positions,
                  const DocumentVisitor& visit, bool keep_text, Directories directories) {
  for (const auto& arg : args) {
    std::vector<std::string> files;
    std::error_code ec;
    if (arg != "-" && fs::is_directory(arg, ec)) {
      if (directories == Directories::kRecursive)
        ManifestFilesOf<fs::recursive_directory_iterator>(arg, files, ec);
      else
        ManifestFilesOf<fs::directory_iterator>(arg, files, ec);
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
