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

#include <idlewheel/owner_offset.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_timer.hpp>

namespace idlewheel {

template <class Session, class Wheel = wheel_timer>
class member_liveness;

/// The config of member_liveness: the hook is a member function of the session.
template <class Session, class Wheel = wheel_timer>
class member_liveness_config : public basic_session_liveness_config<Wheel> {
public:
    using hook_type = void (Session::*)(liveness_event);  ///< The member function told of every event.

    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook the member function every event calls, on the session holding the object.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as basic_session_liveness_config.
    member_liveness_config(Wheel& wheel, const session_liveness_options& options, hook_type hook,
                           liveness_stats* stats = nullptr)
        : basic_session_liveness_config<Wheel>(wheel, options, &dispatch, nullptr, stats), hook_(hook) {
        this->set_handler(&dispatch, this);
    }

private:
    friend class member_liveness<Session, Wheel>;

    static void dispatch(void* context, basic_session_liveness<Wheel>& core, liveness_event e) {
        const auto& self = *static_cast<const member_liveness_config*>(context);
        auto& live = static_cast<member_liveness<Session, Wheel>&>(core);
        (live.owner().*(self.hook_))(e);  // last: it may end the session
    }

    hook_type hook_;
    owner_offset owner_;
};

/// A session_liveness that tells a member function of the session holding it, `void
/// Session::hook(liveness_event)`, with no pointer to the session stored (idlewheel::owner_offset):
/// for a session that drives its own transport (an HTTP session that upgrades, say) and
/// applies the outcomes itself. beast::websocket_liveness and stream_liveness do that for you.
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

    /// The session that holds this object.
    [[nodiscard]] Session& owner() noexcept {
        return static_cast<const config_type&>(this->config()).owner_.template owner<Session>(*this);
    }
};

}  // namespace idlewheel

#endif
