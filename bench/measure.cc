// bench/measure.h. The global operator new/delete are replaced here, in a translation unit of
// their own: where GCC can inline them into callers it warns about free() on memory from
// operator new (-Wmismatched-new-delete), which is exactly what they do.
#include "measure.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <new>
#include <sstream>
#include <vector>

namespace {
std::atomic<unsigned long long> g_allocations{0};

void* Allocate(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* AllocateAligned(std::size_t n, std::align_val_t a) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const auto align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace rw::bench {

unsigned long long AllocCount() { return g_allocations.load(std::memory_order_relaxed); }

namespace {
double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}
}  // namespace

Stat Measure(const std::function<void()>& f, int rounds) {
  f();  // warm caches and lazy state
  int batch = 1;
  for (;;) {
    const double t0 = ThreadCpuNs();
    for (int i = 0; i < batch; ++i) f();
    if (ThreadCpuNs() - t0 > 2e7 || batch > (1 << 22)) break;
    batch *= 2;
  }
  std::vector<double> times;
  const auto a0 = AllocCount();
  for (int r = 0; r < rounds; ++r) {
    const double t0 = ThreadCpuNs();
    for (int i = 0; i < batch; ++i) f();
    times.push_back((ThreadCpuNs() - t0) / batch);
  }
  const auto a1 = AllocCount();
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], static_cast<double>(a1 - a0) / (rounds * batch)};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "bench: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rw::bench

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return AllocateAligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return AllocateAligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
