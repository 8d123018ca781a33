#include "rdma_webhook/codec/dom_arena.h"

#include <bit>
#include <cstdint>
#include <new>

namespace rw::codec {

// Each block starts with this header; max_align_t keeps the bytes after it aligned for any
// value Boost.JSON asks for.
struct alignas(std::max_align_t) BumpResource::Block {
  Block* next;
};

BumpResource::BumpResource(std::size_t first_block) { AddBlock(first_block); }

BumpResource::~BumpResource() {
  while (blocks_ != nullptr) {
    Block* next = blocks_->next;
    ::operator delete(blocks_);
    blocks_ = next;
  }
}

void* BumpResource::do_allocate(std::size_t n, std::size_t align) {
  // align is a power of two (memory_resource's contract); the padding never passes end_ unless
  // the block is full, and then the comparison below fails and a block is added.
  const auto at =
      (reinterpret_cast<std::uintptr_t>(next_) + align - 1) & ~(std::uintptr_t{align} - 1);
  const auto end = reinterpret_cast<std::uintptr_t>(end_);
  if (at <= end && n <= end - at) {
    next_ = reinterpret_cast<char*>(at + n);
    return reinterpret_cast<void*>(at);
  }
  return Grow(n, align);
}

void* BumpResource::Grow(std::size_t n, std::size_t align) {
  // Large enough for n at any alignment; bad_alloc, as from any allocator, when it cannot be.
  const std::size_t need = n + align;
  if (need < n || need > static_cast<std::size_t>(-1) / 4) throw std::bad_alloc();
  AddBlock(next_size_ > need ? next_size_ : need);
  return do_allocate(n, align);
}

void BumpResource::AddBlock(std::size_t size) {
  auto* block = static_cast<Block*>(::operator new(sizeof(Block) + size));
  block->next = blocks_;
  blocks_ = block;
  next_ = reinterpret_cast<char*>(block + 1);
  end_ = next_ + size;
  next_size_ = size * 2;
}

// A review's DOM takes about three times its text (the bench's 3 KB Pod 2.9-3.1x, 10 KB Job
// 2.5-2.7x, 30 KB PyTorchJob of short strings 2.7-2.9x), so a first block of three times the
// body and 4 KiB holds it whole. At twice the body a 30 KB review overflowed into a second
// block: two large allocations per review instead of one. Four times the body measured the same
// at 30 KB but moved a 3 KB review's block out of jemalloc's small size classes (up to 14 KiB),
// 2 % more instructions there. Rounded up to a power of two, as Boost's monotonic_resource did:
// the mutation's edits land in that slack (a container's env list grows by its appends); sized
// exactly, a 30 KB review's patch overflowed into a second large block, and jemalloc's large
// allocations and frees were 2 % of Handle (perf). The block is only reserved: pages not reached
// are never touched. (The body is bounded by the server's request limit, so this cannot overflow.)
DomArena::DomArena(std::size_t body_size) : resource_(std::bit_ceil(body_size * 3 + 4096)) {}

}  // namespace rw::codec
