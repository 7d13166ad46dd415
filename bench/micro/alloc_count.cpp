// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include "alloc_count.hpp"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

// Why malloc and not a counting operator new: Asio allocates its wait operations with
// std::aligned_alloc, and libevent and libuv call malloc; a counter below `new` misses them.
// Every replacement forwards to glibc's allocator (the exported __libc_* entry points), so
// malloc_usable_size() and mallinfo2() stay valid; when no window is open, counting costs one
// well-predicted branch. A block freed inside a window but allocated before it is taken back
// too; the windows only create and arm, so that does not happen there in practice.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IDLEWHEEL_BENCH_COUNT_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define IDLEWHEEL_BENCH_COUNT_MALLOC 0
#endif
#endif
#ifndef IDLEWHEEL_BENCH_COUNT_MALLOC
#define IDLEWHEEL_BENCH_COUNT_MALLOC 1
#endif

namespace {

std::atomic<bool> counting{false};
std::atomic<std::int64_t> usable{0};
std::atomic<std::int64_t> blocks{0};

std::int64_t footprint() noexcept {
    const struct mallinfo2 mi = mallinfo2();
    return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd);
}

#if IDLEWHEEL_BENCH_COUNT_MALLOC
inline void note(void* p, std::int64_t sign) noexcept {
    if (p == nullptr || !counting.load(std::memory_order_relaxed)) return;
    usable.fetch_add(sign * static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
    blocks.fetch_add(sign, std::memory_order_relaxed);
}
#endif

}  // namespace

#if IDLEWHEEL_BENCH_COUNT_MALLOC
extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);

void* malloc(std::size_t n) {
    void* p = __libc_malloc(n);
    note(p, 1);
    return p;
}
void free(void* p) {
    note(p, -1);
    __libc_free(p);
}
void* calloc(std::size_t count, std::size_t size) {
    void* p = __libc_calloc(count, size);
    note(p, 1);
    return p;
}
void* realloc(void* p, std::size_t n) {
    const std::int64_t before = p != nullptr ? static_cast<std::int64_t>(malloc_usable_size(p)) : -1;
    void* q = __libc_realloc(p, n);
    if (q == nullptr && n != 0) return nullptr;  // p is untouched
    if (counting.load(std::memory_order_relaxed)) {
        if (before >= 0) {  // the old block is gone (or resized in place)
            usable.fetch_sub(before, std::memory_order_relaxed);
            blocks.fetch_sub(1, std::memory_order_relaxed);
        }
        note(q, 1);
    }
    return q;
}
void* memalign(std::size_t alignment, std::size_t n) {
    void* p = __libc_memalign(alignment, n);
    note(p, 1);
    return p;
}
void* aligned_alloc(std::size_t alignment, std::size_t n) { return memalign(alignment, n); }
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* p = memalign(alignment, n);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}
}
#endif

namespace bench::alloc_count {

bool counting_available() noexcept { return IDLEWHEEL_BENCH_COUNT_MALLOC != 0; }

snapshot start() noexcept {
    usable.store(0, std::memory_order_relaxed);
    blocks.store(0, std::memory_order_relaxed);
    snapshot s;
    s.footprint = footprint();
    counting.store(true, std::memory_order_relaxed);
    return s;
}

snapshot stop(const snapshot& baseline) noexcept {
    counting.store(false, std::memory_order_relaxed);
    snapshot s;
    s.footprint = footprint() - baseline.footprint;
    s.usable = usable.load(std::memory_order_relaxed);
    s.blocks = blocks.load(std::memory_order_relaxed);
    return s;
}

}  // namespace bench::alloc_count
