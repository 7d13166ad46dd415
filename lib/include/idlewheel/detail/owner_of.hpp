// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_OWNER_OF_HPP
#define IDLEWHEEL_DETAIL_OWNER_OF_HPP

// From a member back to the object that holds it, with no pointer stored in the member (the
// kernel's container_of). A liveness object is a member of its session; every session of a
// type holds it at the same offset, so the offset is learnt once, from the first member
// constructed, and kept in the config that all sessions of the thread share: the session
// pays no byte for it. (offsetof would need a standard-layout session, which a session
// deriving from enable_shared_from_this is not.)

#include <cassert>
#include <cstddef>
#include <cstdint>

namespace idlewheel::detail {

class owner_offset {
public:
    static constexpr std::uintptr_t unknown = ~std::uintptr_t{0};

    /// Records where `member` sits in `owner` (the same for every owner of a type).
    template <class Owner, class Member>
    void learn(const Owner& owner, const Member& member) const noexcept {
        const auto o = reinterpret_cast<std::uintptr_t>(&owner);
        const auto m = reinterpret_cast<std::uintptr_t>(&member);
        assert(m >= o && m - o < sizeof(Owner) && "idlewheel: the liveness object must be a member of its session");
        assert((offset_ == unknown || offset_ == m - o) && "idlewheel: one config per session type and member");
        offset_ = m - o;
    }

    /// The owner of `member` (learn() has been called for some owner of this type).
    template <class Owner, class Member>
    [[nodiscard]] Owner& owner(Member& member) const noexcept {
        return *reinterpret_cast<Owner*>(reinterpret_cast<std::uintptr_t>(&member) - offset_);
    }

private:
    mutable std::uintptr_t offset_ = unknown;  // set by the sessions of one thread: no race
};

}  // namespace idlewheel::detail

#endif
