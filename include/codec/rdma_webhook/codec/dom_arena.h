#pragma once
// The per-request arena a review's DOM is parsed into (ParseDom): a bump of a pointer per value,
// and everything freed at once when the request is done.
#include <cstddef>

#include <boost/json/memory_resource.hpp>
#include <boost/json/storage_ptr.hpp>

namespace rw::codec {

// A bump allocator over a chain of blocks. Boost.JSON's monotonic_resource does the same, but
// through a general alignment routine that made its allocate 36 instructions; a 30 KB review
// allocates about 2,100 times (a key, a long string, an object each), 7 % of its Handle
// (bench/PROFILE.md). Deallocation is a no-op, which Boost.JSON is told below, so values in it
// are never walked to be freed.
class BumpResource final : public boost::json::memory_resource {
 public:
  // The first block (allocated here) holds `first_block` bytes; each later one twice the one
  // before, and at least the allocation that needed it.
  explicit BumpResource(std::size_t first_block);
  ~BumpResource() override;
  BumpResource(const BumpResource&) = delete;
  BumpResource& operator=(const BumpResource&) = delete;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override;
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }
  void* Grow(std::size_t n, std::size_t align);
  void AddBlock(std::size_t size);

  struct Block;
  Block* blocks_ = nullptr;
  char* next_ = nullptr;
  char* end_ = nullptr;
  std::size_t next_size_ = 0;  // set by AddBlock
};

// A per-request arena for ParseDom: the first block is sized from the body, so a review is
// usually parsed with one allocation, and everything parsed into it is freed at once with it.
// Not shared (values hold a plain pointer to it), so it must outlive them.
class DomArena {
 public:
  explicit DomArena(std::size_t body_size);
  boost::json::storage_ptr storage() const { return boost::json::storage_ptr(&resource_); }

 private:
  mutable BumpResource resource_;
};

}  // namespace rw::codec

template <>
struct boost::json::is_deallocate_trivial<rw::codec::BumpResource> {
  static constexpr bool value = true;
};
