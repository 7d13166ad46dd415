// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_OWNER_HOOK_HPP
#define IDLEWHEEL_DETAIL_OWNER_HOOK_HPP

// The hook of a config whose liveness object finds its session from its own address
// (member_liveness_config, stream_liveness_config, beast::websocket_liveness_config), and how
// the config's handler calls it. The way is chosen once, at construction, by which handler the
// config installs (its dispatch<Call>): a member known at compile time (bind_member<&S::f>(),
// called directly: the config's handler is the only indirect call), a plain function (a
// lambda: one more indirect call), or 1.0's runtime member pointer (deprecated). No branch on
// the way at run time, and the hook costs the config two words, not the session any.

#include <idlewheel/bind_member.hpp>

#include <type_traits>

namespace idlewheel::detail {

template <class T>
struct is_member_hook : std::false_type {};
template <auto Member>
struct is_member_hook<member_hook<Member>> : std::true_type {};

template <class Session, class Event>
struct owner_hook {
    using function_type = void (*)(Session&, Event);
    using member_pointer = void (Session::*)(Event);

    function_type function = nullptr;  // by_function's
    member_pointer member = nullptr;   // by_member_pointer's

    // The config's handler calls Call::call(hook, session, event), last.
    struct by_function {
        static void call(const owner_hook& h, Session& s, Event e) {
            if (h.function != nullptr) h.function(s, e);
        }
    };
    struct by_member_pointer {
        static void call(const owner_hook& h, Session& s, Event e) {
            if (h.member != nullptr) (s.*(h.member))(e);
        }
    };
    template <auto Member>
    struct direct {
        static_assert(std::is_invocable_v<decltype(Member), Session&, Event>,
                      "idlewheel: the hook bind_member<&Session::f>() needs `void Session::f(liveness_event)`");
        static void call(const owner_hook&, Session& s, Event e) { member_hook<Member>::call(s, e); }
    };

    // A deprecated constructor's hook: 1.0's member pointer (a literal null goes to the function form).
    template <class Hook>
    static constexpr bool is_member_pointer_v =
        std::is_convertible_v<Hook, member_pointer> && !std::is_null_pointer_v<Hook>;

    // The configs take (..., options, hook, stats); 1.x's stream and WebSocket configs took
    // (..., options, stats, hook). A constructor of the old order is told apart by the types of
    // its last two arguments: a stats pointer (or a null), then a function hook (or a null),
    // not both null (that call means the same in either order: it goes to the one order's).
    template <class Stats, class Hook, class StatsPointer>
    static constexpr bool is_stats_then_function_v =
        std::is_convertible_v<Stats, StatsPointer>&& std::is_convertible_v<Hook, function_type> &&
        !is_member_hook<Hook>::value && !(std::is_null_pointer_v<Stats> && std::is_null_pointer_v<Hook>);
    // The stats alone, no hook (a literal null goes to the one order's constructor).
    template <class Stats, class StatsPointer>
    static constexpr bool is_stats_v = std::is_convertible_v<Stats, StatsPointer> && !std::is_null_pointer_v<Stats>;
};

}  // namespace idlewheel::detail

#endif
