// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BENCH_MICRO_OBJECT_ARRAY_HPP
#define IDLEWHEEL_BENCH_MICRO_OBJECT_ARRAY_HPP

#include <cstddef>
#include <new>

namespace bench {

// N objects side by side, constructed in place with the same arguments (timers, nodes and
// watches are neither copyable nor movable), destroyed in reverse order.
template <class T>
class object_array {
public:
    template <class... Args>
    explicit object_array(std::size_t n, Args&&... args)
        : data_(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))))) {
        try {
            for (; size_ < n; ++size_) ::new (static_cast<void*>(data_ + size_)) T(args...);
        } catch (...) {
            destroy();
            throw;
        }
    }
    object_array(const object_array&) = delete;
    object_array& operator=(const object_array&) = delete;
    ~object_array() { destroy(); }

    T& operator[](std::size_t i) noexcept { return data_[i]; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    T* begin() noexcept { return data_; }
    T* end() noexcept { return data_ + size_; }

private:
    void destroy() noexcept {
        while (size_ > 0) data_[--size_].~T();
        ::operator delete(data_, std::align_val_t(alignof(T)));
    }

    T* data_;
    std::size_t size_ = 0;
};

}  // namespace bench

#endif
