// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_MEMBER_LIVENESS_HPP
#define IDLEWHEEL_MEMBER_LIVENESS_HPP

/** @file
 * @brief idlewheel::member_liveness: a session_liveness that calls a member function of the session holding it.
 *
 * idlewheel/session_liveness.hpp includes this header at its end, so code that includes only
 * session_liveness.hpp and uses member_liveness keeps compiling; this header includes
 * session_liveness.hpp (either may come first).
 */

#include <idlewheel/bind_member.hpp>
#include <idlewheel/detail/owner_hook.hpp>
#include <idlewheel/owner_offset.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <type_traits>

namespace idlewheel {

template <class Session, class Wheel = wheel_timer>
class member_liveness;

/// The config of member_liveness: the hook is a member function of the session,
/// `bind_member<&Session::on_liveness>()`, or a function of the session (a captureless lambda
/// `[](Session& s, idlewheel::liveness_event e) {...}`).
template <class Session, class Wheel = wheel_timer>
class member_liveness_config : public basic_session_liveness_config<Wheel> {
    using base = basic_session_liveness_config<Wheel>;
    using owner_hook = detail::owner_hook<Session, liveness_event>;

public:
    /// The hook as a plain function: called with the session holding the object and the event.
    using hook_function = void (*)(Session& session, liveness_event event);
    /// The hook as a member pointer, the form of 1.0.
    /// @deprecated Use bind_member<&Session::f>() (or a hook_function); 2.0 drops it.
    using hook_type [[deprecated("use idlewheel::bind_member<&Session::f>()")]] = typename owner_hook::member_pointer;

    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook the member function every event calls, on the session holding the object:
    /// `bind_member<&Session::on_liveness>()` (called directly).
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as basic_session_liveness_config.
    template <auto Member>
    member_liveness_config(Wheel& wheel, const session_liveness_options& options, member_hook<Member> hook,
                           liveness_stats* stats = nullptr)
        : base(wheel, options, {&dispatch<typename owner_hook::template direct<Member>>, this}, stats) {
        (void)hook;
    }

    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook the function every event calls with the session holding the object (a
    /// captureless lambda converts to it); must not be null.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as basic_session_liveness_config.
    member_liveness_config(Wheel& wheel, const session_liveness_options& options, hook_function hook,
                           liveness_stats* stats = nullptr)
        : base(wheel, options, {&dispatch<typename owner_hook::by_function>, this}, stats), hook_{hook, nullptr} {}

    /// The form of 1.0: the hook as a member pointer, `&Session::on_liveness`, called through it.
    /// @deprecated Use bind_member<&Session::on_liveness>(); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook the member function every event calls, on the session holding the object.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as basic_session_liveness_config.
    template <class Hook, std::enable_if_t<owner_hook::template is_member_pointer_v<Hook>, int> = 0>
    [[deprecated("use idlewheel::bind_member<&Session::f>() as the hook")]] member_liveness_config(
        Wheel& wheel, const session_liveness_options& options, Hook hook, liveness_stats* stats = nullptr)
        : base(wheel, options, {&dispatch<typename owner_hook::by_member_pointer>, this}, stats), hook_{nullptr, hook} {}

private:
    friend class member_liveness<Session, Wheel>;

    template <class Call>
    static void dispatch(void* context, basic_session_liveness<Wheel>& core, liveness_event e) {
        const auto& self = *static_cast<const member_liveness_config*>(context);
        auto& live = static_cast<member_liveness<Session, Wheel>&>(core);
        Call::call(self.hook_, live.owner(), e);  // last: it may end the session
    }

    owner_hook hook_;
    owner_offset owner_;
};

/// A session_liveness that tells a member function of the session holding it, `void
/// Session::hook(liveness_event)`, with no pointer to the session stored (idlewheel::owner_offset):
/// for a session that drives its own transport (an HTTP session that upgrades, say) and
/// applies the outcomes itself; rebind() moves it to another config (HTTP to WebSocket) in
/// place. beast::websocket_liveness and stream_liveness do that for you.
template <class Session, class Wheel>
class member_liveness : public basic_session_liveness<Wheel> {
public:
    using config_type = member_liveness_config<Session, Wheel>;  ///< Its config.

    /// A stopped session of `config`, held by `owner` (it must be a member of `owner`, at the
    /// same offset in every Session).
    /// @param config the config; must outlive the object.
    /// @param owner the session that holds this object.
    member_liveness(const config_type& config, Session& owner) noexcept : basic_session_liveness<Wheel>(config) {
        config.owner_.learn(owner, *this);
    }

    /**
     * Re-binds the object to another config of the same Session type, without destroying
     * it: an HTTP session's liveness moves to its WebSocket config after the upgrade.
     *
     * The object becomes what `member_liveness(config, owner())` would be at the same
     * address: stopped (current() is phase::stopped), with no verdict, no ping awaited,
     * ping_in_flight() false, no activity, and the jitter offset of `config`. Call start()
     * or start_handshake() after it to watch the session on `config`'s times from then.
     *
     *  - An armed deadline (any phase: handshake, open, closing, a ping awaited) is cancelled
     *    as by stop(): no event of the old config comes after this call, even one due now
     *    and not yet run. Its entry leaves the wheel, so the next start counts against
     *    wheel_options::max_pending like a first start (it may throw error::too_many_pending).
     *  - Counters: nothing is counted, in either config's liveness_stats. What the old
     *    config counted stays there; verdicts and pings after the next start count in
     *    `config`'s.
     *  - The hook: every event after the next start calls `config`'s hook, on owner() (the
     *    same session: `config` learns where the object sits in it).
     *  - Re-binding to the config it is already on is allowed: a stop() that also clears
     *    the verdict.
     *
     * @par Thread safety
     * On the wheel's executor, like every other call (checked with IDLEWHEEL_CHECK_EXECUTOR).
     * It may be called from this object's own hook (the object touches nothing after the
     * hook returns), including to re-bind and start again there.
     *
     * @param config the config from now on: of the same Session type (a compile error
     * otherwise); must be on this object's wheel and outlive the object.
     * @throws std::invalid_argument if `config` is on another wheel than the current one;
     * nothing is changed then (the object stays on its config, in its phase, armed or not).
     */
    void rebind(const config_type& config) {
        Session& session = owner();
        this->rebind_config(config);
        config.owner_.learn(session, *this);
    }

    /// The session that holds this object.
    [[nodiscard]] Session& owner() noexcept {
        return static_cast<const config_type&>(this->config()).owner_.template owner<Session>(*this);
    }
};

}  // namespace idlewheel

#endif
