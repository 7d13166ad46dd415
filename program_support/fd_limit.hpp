// Every connection is a descriptor: servers and load generators start by taking all the
// descriptors the process may have.
#ifndef IDLEWHEEL_PROGRAM_SUPPORT_FD_LIMIT_HPP
#define IDLEWHEEL_PROGRAM_SUPPORT_FD_LIMIT_HPP

#include <sys/resource.h>

namespace program_support {

struct fd_limit {
    unsigned long long soft = 0;  // what the process may open now
    unsigned long long hard = 0;  // the most an unprivileged process can raise `soft` to
};

/// Raises the soft RLIMIT_NOFILE to the hard limit and returns the limits then in force
/// (both 0 if they cannot be read).
inline fd_limit raise_fd_limit() noexcept {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return {};
    if (lim.rlim_cur < lim.rlim_max) {
        rlimit want = lim;
        want.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &want) == 0) lim = want;
    }
    return {static_cast<unsigned long long>(lim.rlim_cur), static_cast<unsigned long long>(lim.rlim_max)};
}

}  // namespace program_support

#endif
