#pragma once
// A buffered reader over a Pull callback that knows the line and column of the next byte:
// the streaming reader's errors and positions name lines as the whole-text reader's do.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "rdma_webhook/codec/document_stream.h"

namespace rw::codec {

class ByteReader {
 public:
  explicit ByteReader(const Pull& pull, std::size_t buffer_bytes = std::size_t{1} << 16)
      : pull_(pull), buffer_(buffer_bytes) {}

  // The next byte (0..255), or -1 at the end of the stream.
  int Peek() {
    if (pos_ == end_ && !Fill()) return -1;
    return static_cast<unsigned char>(buffer_[pos_]);
  }

  int Get() {
    const int c = Peek();
    if (c < 0) return c;
    ++pos_;
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else {
      ++column_;
    }
    return c;
  }

  std::size_t line() const { return line_; }      // 1-based line of the next byte
  std::size_t column() const { return column_; }  // 0-based column of the next byte

  // Drops a UTF-8 byte order mark at the start (only there: it is part of no line).
  void SkipByteOrderMark() {
    while (end_ - pos_ < 3 && !eof_) {  // a pipe may hand over fewer bytes at a time
      std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
      const std::size_t n = pull_(buffer_.data() + end_, buffer_.size() - end_);
      if (n == 0) eof_ = true;
      end_ += n;
    }
    if (end_ - pos_ >= 3 && std::memcmp(buffer_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  }

  // The next line without its '\n'. A stream of N newlines has N + 1 lines (the last may be
  // empty), as splitting its text on '\n' gives. Keeps at most `max` bytes of a line and sets
  // `truncated` when there were more (they are skipped).
  bool ReadLine(std::string& line, std::size_t max, bool& truncated) {
    if (done_) return false;
    line.clear();
    truncated = false;
    while (true) {
      if (pos_ == end_ && !Fill()) {
        done_ = true;
        return true;
      }
      const char* begin = buffer_.data() + pos_;
      const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
      const std::size_t n = newline ? static_cast<std::size_t>(newline - begin) : end_ - pos_;
      const std::size_t keep = line.size() + n > max ? max - std::min(max, line.size()) : n;
      if (keep < n) truncated = true;
      line.append(begin, keep);
      pos_ += n;
      if (newline) {
        ++pos_;
        ++line_;
        column_ = 0;
        return true;
      }
      column_ += n;
    }
  }

  // An input iterator over the remaining bytes, for nlohmann's SAX parser.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = char;

    explicit Iterator(ByteReader* reader = nullptr) : reader_(reader) {}
    char operator*() const { return static_cast<char>(reader_->Peek()); }
    Iterator& operator++() {
      reader_->Get();
      return *this;
    }
    bool operator==(const Iterator& other) const { return AtEnd() == other.AtEnd(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    bool AtEnd() const { return reader_ == nullptr || reader_->Peek() < 0; }
    ByteReader* reader_;
  };

 private:
  bool Fill() {
    if (eof_) return false;
    pos_ = 0;
    end_ = pull_(buffer_.data(), buffer_.size());
    if (end_ == 0) eof_ = true;
    return end_ > 0;
  }

  const Pull& pull_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0, end_ = 0;
  std::size_t line_ = 1, column_ = 0;
  bool eof_ = false, done_ = false;
};

}  // namespace rw::codec
