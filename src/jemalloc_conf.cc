// jemalloc's options for the binaries that link it (RW_JEMALLOC): jemalloc reads this weak
// symbol at its first allocation, and MALLOC_CONF in the environment still overrides it.
//
// A review builds and frees its whole DOM: about 3 000 small objects for a 30 KB PyTorchJob.
// jemalloc's thread cache keeps at most 200 objects per size class by default, so every large
// review overflowed it, and flushing objects to the arena and refilling from it were a fifth of
// a 30 KB review's instructions (bench/PROFILE.md). A class may now cache up to 16 slabs' worth
// of regions, at most 2048 objects: a review's objects stay in its thread's cache. The bound is
// per thread and per class (classes of large objects have few regions per slab and cache few).
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "tcache_nslots_small_max:2048,lg_tcache_nslots_mul:4";
}
