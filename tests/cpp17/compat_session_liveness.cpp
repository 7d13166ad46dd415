// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// member_liveness moved to <idlewheel/member_liveness.hpp>; code that includes only
// session_liveness.hpp and uses it must still compile (compiled only, as C++17).
#include <idlewheel/session_liveness.hpp>

namespace {
struct session {
    session(const idlewheel::member_liveness_config<session>& config) : live(config, *this) {}
    void on_liveness(idlewheel::liveness_event) {}
    idlewheel::member_liveness<session> live;
};
}  // namespace

void compat_session_liveness(idlewheel::wheel_timer& wheel) {
    const idlewheel::member_liveness_config<session> config(wheel, idlewheel::session_liveness_options{},
                                                            idlewheel::bind_member<&session::on_liveness>());
    session s(config);
    s.live.start_handshake();
}
