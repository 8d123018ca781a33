// The arena a review is parsed into (codec/dom_arena.h): every block Boost.JSON is handed must be
// aligned as asked and never overlap another, however far past its first block a review grows.
#include "rdma_webhook/codec/dom_arena.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/value.hpp>

#include "rdma_webhook/codec/dom.h"
#include "rdma_webhook/codec/yaml.h"  // kMaxNestingDepth

namespace {

namespace bj = boost::json;

bool Aligned(const void* p, std::size_t align) {
  return reinterpret_cast<std::uintptr_t>(p) % align == 0;
}

TEST(DomArena, AllocationsAreAlignedAndDisjointAcrossBlocks) {
  rw::codec::BumpResource arena(64);  // a tiny first block, so most requests need a new one
  struct Piece {
    unsigned char* at;
    std::size_t size;
  };
  std::vector<Piece> pieces;
  const std::size_t aligns[] = {1, 2, 8, 16, 64};
  for (std::size_t i = 0; i < 400; ++i) {
    const std::size_t size = 1 + (i * 37) % 300;  // some larger than the block in use
    const std::size_t align = aligns[i % 5];
    auto* p = static_cast<unsigned char*>(arena.allocate(size, align));
    ASSERT_TRUE(Aligned(p, align)) << "allocation " << i;
    std::memset(p, static_cast<int>(i & 0xff), size);
    pieces.push_back({p, size});
  }
  // Each piece still holds what was written into it: none was handed out twice.
  for (std::size_t i = 0; i < pieces.size(); ++i)
    for (std::size_t b = 0; b < pieces[i].size; ++b)
      ASSERT_EQ(pieces[i].at[b], static_cast<unsigned char>(i & 0xff)) << "allocation " << i;
}

TEST(DomArena, AnAllocationLargerThanAnyBlockStillFits) {
  rw::codec::BumpResource arena(16);
  void* big = arena.allocate(1 << 20, 16);
  ASSERT_NE(big, nullptr);
  std::memset(big, 0xab, 1 << 20);
  EXPECT_TRUE(Aligned(big, 16));
}

TEST(DomArena, ValuesInItAreNotFreedOneByOne) {
  // Boost.JSON skips destroying values whose storage says deallocation does nothing; the arena
  // must say so, or every review would walk its DOM again only to free nothing.
  const rw::codec::DomArena arena(10);
  EXPECT_TRUE(arena.storage().is_deallocate_trivial());
}

TEST(DomArena, AReviewLargerThanItsFirstBlockParsesWhole) {
  // The arena is sized from the body; a DOM that outgrows the estimate (here one made for a
  // 16-byte body) goes on in new blocks, value for value.
  std::string text = "[";
  for (int i = 0; i < 5000; ++i) text += std::string(i ? "," : "") + "{\"k\":[{}]}";
  text += "]";
  rw::codec::DomArena arena(16);
  const bj::value dom = rw::codec::ParseDom(text, rw::codec::kMaxNestingDepth, arena.storage());
  ASSERT_TRUE(dom.is_array());
  EXPECT_EQ(dom.get_array().size(), 5000u);
  EXPECT_EQ(rw::codec::FromDom(dom), nlohmann::json::parse(text));
}

}  // namespace
