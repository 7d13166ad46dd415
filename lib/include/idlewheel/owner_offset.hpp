// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_OWNER_OFFSET_HPP
#define IDLEWHEEL_OWNER_OFFSET_HPP

/** @file
 * @brief idlewheel::owner_offset: from a member back to the object that holds it.
 */

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>

namespace idlewheel {

/**
 * idlewheel::owner_offset: from a member back to the object that holds it, with no pointer
 * stored in the member (the kernel's container_of). A liveness object is a member of its
 * session; every session of a type holds it at the same offset, so the offset is learnt once,
 * from the first member constructed, and kept in the config that all sessions of the thread
 * share: the session pays no byte for it. (offsetof would need a standard-layout session,
 * which a session deriving from enable_shared_from_this is not.)
 *
 * member_liveness, stream_liveness and beast::websocket_liveness use it for you. It is public
 * for a session that shares one config of its own with every session of its type (a
 * basic_session_liveness_config subclass holding an owner_offset) and whose handler finds the
 * session from the liveness object it is given:
 *
 *     struct my_config : idlewheel::session_liveness_config {
 *         using session_liveness_config::session_liveness_config;
 *         idlewheel::owner_offset session_at;  // where the liveness object sits in a session
 *     };
 *     // in the session's constructor:   config.session_at.learn(*this, live_);
 *     // in the config's handler:        config.session_at.owner<session>(live)
 *
 * One owner_offset per (owner type, member): learning another offset is a bug (an assertion
 * in debug builds), and so is asking owner() before any learn() of that type.
 *
 * @par Thread safety
 * learn() may be called from any thread, concurrently with owner() and member() (a relaxed
 * atomic: every owner of a type stores the same value).
 */
class owner_offset {
public:
    /// What offset() is before the first learn().
    static constexpr std::uintptr_t unknown = ~std::uintptr_t{0};

    /// Records where `member` sits in `owner` (the same for every owner of a type): `member`
    /// must lie within `owner`'s bytes. Only the first call writes: owners may be constructed
    /// on any thread (a wheel_pool's listener builds sessions before they reach their strand)
    /// while others read the offset.
    /// @param owner the object (a session) that holds `member`
    /// @param member a member of `owner` (its liveness object)
    template <class Owner, class Member>
    void learn(const Owner& owner, const Member& member) const noexcept {
        const auto o = reinterpret_cast<std::uintptr_t>(&owner);
        const auto m = reinterpret_cast<std::uintptr_t>(&member);
        assert(m >= o && m - o + sizeof(Member) <= sizeof(Owner) &&
               "idlewheel: the liveness object (and the stream it names) must be members of the session");
        const auto known = offset_.load(std::memory_order_relaxed);
        assert((known == unknown || known == m - o) && "idlewheel: one config per session type and member");
        if (known != m - o) offset_.store(m - o, std::memory_order_relaxed);
    }

    /// The owner of `member` (learn() has been called for some owner of this type).
    /// @param member a member of an `Owner`, at the offset learnt
    /// @return the `Owner` that holds `member`
    template <class Owner, class Member>
    [[nodiscard]] Owner& owner(Member& member) const noexcept {
        return *reinterpret_cast<Owner*>(reinterpret_cast<std::uintptr_t>(&member) - offset_.load(std::memory_order_relaxed));
    }

    /// The member of `owner` (learn() has been called for some owner of this type).
    /// @param owner an `Owner`
    /// @return its `Member` at the offset learnt
    template <class Member, class Owner>
    [[nodiscard]] Member& member(Owner& owner) const noexcept {
        return *reinterpret_cast<Member*>(reinterpret_cast<std::uintptr_t>(&owner) + offset_.load(std::memory_order_relaxed));
    }

    /// The offset learnt, or `unknown`.
    [[nodiscard]] std::uintptr_t offset() const noexcept { return offset_.load(std::memory_order_relaxed); }

private:
    // Relaxed: every owner of a type stores the same value, and an owner's own construction
    // happens before anything reads the offset for it.
    mutable std::atomic<std::uintptr_t> offset_{unknown};
};

}  // namespace idlewheel

#endif
