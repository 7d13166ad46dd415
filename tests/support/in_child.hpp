// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_SUPPORT_IN_CHILD_HPP
#define IDLEWHEEL_TESTS_SUPPORT_IN_CHILD_HPP

// Death tests (tests/test_executor_check.cpp, tests/test_beast_tcp_stream_close.cpp): a misuse made
// for real in a forked child, which must end it with SIGABRT and a message on stderr.
//
// Uses Boost.Test's BOOST_REQUIRE: include it after <boost/test/unit_test.hpp> (which comes
// after the test file's BOOST_TEST_MODULE; including Boost.Test here first would lose main()).

#if !defined(BOOST_REQUIRE)
#error "include <boost/test/unit_test.hpp> before support/in_child.hpp"
#endif

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <string>

namespace idlewheel::test {

/// How a child ended, and what it wrote to stderr.
struct child_outcome {
    bool aborted = false;  // by SIGABRT
    int exit_code = -1;    // -1 unless it exited
    std::string err;
};

/// Runs `f` in a child process with stderr captured; the child exits 0 if `f` returns.
template <class F>
child_outcome in_child(F f) {
    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    std::cout.flush();  // or the child's copy of Boost.Test's buffered output is written again
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(fds[0]);
        ::dup2(fds[1], STDERR_FILENO);
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        // Boost.Test's handlers would catch the abort and go on with the next test case.
        for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
        f();
        ::_exit(0);
    }
    ::close(fds[1]);
    child_outcome o;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) o.err.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    o.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

}  // namespace idlewheel::test

#endif
