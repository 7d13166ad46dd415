// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// basic_session_liveness_config::handler_type, 1.0's name of the handler's function, is
// deprecated (bound_handler, bound_handler::function_type): under
// -Werror=deprecated-declarations a use is refused with the message naming the replacement.
#include <idlewheel/session_liveness.hpp>

using old_name = idlewheel::session_liveness_config::handler_type;
old_name unused_function = nullptr;
