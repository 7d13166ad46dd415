// demo_server as a child process, for black-box tests.
//
//     demo_test::server_process srv(path, {"--timers=wheel", "--idle-timeout", "500ms"});
//     srv.tcp_port(); srv.http_port();          // parsed from the "listening ..." line
//     srv.signal(SIGTERM);
//     std::optional<int> code = srv.wait_exit(5s); // exit status, or nothing on timeout
//
// The child is started with posix_spawn: stdout is a pipe (the helper reads the one line
// "listening tcp=HOST:PORT http=HOST:PORT", waiting at most `ready_timeout`), stderr goes to an
// unnamed temporary file kept for diagnostics (`log()`), and no other descriptor of the test
// leaks into it (a leaked client socket would keep a connection open after the test closed
// it). Every wait is bounded, and the destructor always kills and reaps the child, so a
// failing test never leaves a server behind. Port 0 is added unless the caller chose ports.
//
// No Boost.Test here: failures are std::runtime_error with the server's log attached.
//
// IDLEWHEEL_DEMO_ARGS adds arguments to every server of a test run (with_run_args below): ctest
// runs the suites that exercise concurrency once more with "--io-threads 2".
#ifndef IDLEWHEEL_TESTS_DEMO_SERVER_PROCESS_HPP
#define IDLEWHEEL_TESTS_DEMO_SERVER_PROCESS_HPP

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace demo_test {

/// `args` plus the test run's extra server arguments: IDLEWHEEL_DEMO_ARGS, split at spaces
/// (e.g. "--io-threads 2"). An option `args` sets already keeps the test's value. With
/// --io-threads among the extra arguments, the test's own --threads N is dropped (the two are
/// exclusive): a test that asks for several threads gets them in the other threading shape.
/// The fixtures of tests/demo_server/functional and tests/demo_server/reliability start every server through this.
inline std::vector<std::string> with_run_args(std::vector<std::string> args) {
    const char* env = std::getenv("IDLEWHEEL_DEMO_ARGS");
    if (env == nullptr) return args;
    std::vector<std::string> extra;
    std::istringstream words(env);
    for (std::string w; words >> w;) extra.push_back(w);
    const auto is_option = [](const std::string& a) { return a.rfind("--", 0) == 0; };
    const auto name_of = [](const std::string& a) { return a.substr(0, a.find('=')); };
    const auto sets = [&](const std::vector<std::string>& v, const std::string& name) {
        return std::any_of(v.begin(), v.end(), [&](const std::string& a) { return is_option(a) && name_of(a) == name; });
    };
    if (sets(extra, "--io-threads")) {
        for (auto it = args.begin(); it != args.end();) {
            if (!is_option(*it) || name_of(*it) != "--threads") {
                ++it;
                continue;
            }
            const bool value_follows = *it == "--threads";
            it = args.erase(it);
            if (value_follows && it != args.end() && !is_option(*it)) it = args.erase(it);
        }
    }
    for (std::size_t i = 0; i < extra.size();) {
        std::size_t end = i + 1;  // the option and its values
        while (end < extra.size() && !is_option(extra[end])) ++end;
        if (!sets(args, name_of(extra[i])))
            args.insert(args.end(), extra.begin() + static_cast<std::ptrdiff_t>(i), extra.begin() + static_cast<std::ptrdiff_t>(end));
        i = end;
    }
    return args;
}

/// What a finished run of the binary produced (for command-line tests).
struct run_result {
    std::optional<int> exit_code;  ///< nothing if it did not exit normally in time (then killed)
    std::string out;               ///< all of stdout
    std::string err;               ///< all of stderr
};

class server_process {
public:
    using clock = std::chrono::steady_clock;

    /// Starts `binary` with `args` (plus "--tcp-port 0 --http-port 0" unless a port is given)
    /// and waits for the listening line. Throws std::runtime_error (with the server's stderr)
    /// if the process does not start, exits, or says nothing within `ready_timeout`.
    server_process(const std::string& binary, std::vector<std::string> args,
                   clock::duration ready_timeout = std::chrono::seconds(10)) {
        if (!has_option(args, "--tcp-port")) args.insert(args.end(), {"--tcp-port", "0"});
        if (!has_option(args, "--http-port")) args.insert(args.end(), {"--http-port", "0"});
        spawn(binary, args);
        try {
            std::string line;
            const auto deadline = clock::now() + ready_timeout;
            while (line.find('\n') == std::string::npos) {
                if (!read_some(line, deadline))
                    throw std::runtime_error("demo_server did not print its listening line in time (got '" + line + "')");
            }
            line.erase(line.find('\n'));
            parse_listening_line(line);
            listening_line_ = line;
        } catch (const std::exception& e) {
            // No destructor runs for a half-constructed object: clean up here.
            close_out();
            kill_now();
            const std::string message = std::string(e.what()) + "; demo_server's stderr:\n" + log();
            close_log();
            throw std::runtime_error(message);
        }
    }

    server_process(const server_process&) = delete;
    server_process& operator=(const server_process&) = delete;

    ~server_process() {
        kill_now();
        close_out();
        close_log();
    }

    [[nodiscard]] const std::string& host() const noexcept { return host_; }
    [[nodiscard]] unsigned short tcp_port() const noexcept { return tcp_port_; }
    [[nodiscard]] unsigned short http_port() const noexcept { return http_port_; }
    [[nodiscard]] const std::string& listening_line() const noexcept { return listening_line_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    [[nodiscard]] bool running() const noexcept { return pid_ > 0 && !status_; }

    /// Sends `sig` to the child (nothing if it has been reaped already).
    void signal(int sig) const {
        if (running()) ::kill(pid_, sig);
    }

    /// Waits at most `timeout` for the child to end. The exit code if it exited normally,
    /// 128 + signal number if a signal ended it, nothing if it is still running.
    std::optional<int> wait_exit(clock::duration timeout) {
        if (pid_ <= 0) return std::nullopt;  // never started (waitpid(-1) would reap anyone's child)
        const auto deadline = clock::now() + timeout;
        while (!status_) {
            int st = 0;
            const pid_t r = ::waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                status_ = st;
                break;
            }
            if (r < 0 && errno != EINTR) break;  // not our child any more: nothing to wait for
            if (clock::now() >= deadline) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (!status_) return std::nullopt;
        if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
        if (WIFSIGNALED(*status_)) return 128 + WTERMSIG(*status_);
        return std::nullopt;
    }

    /// SIGKILL and reap (bounded). Safe to call at any time, any number of times.
    void kill_now() noexcept {
        if (!running()) return;
        ::kill(pid_, SIGKILL);
        try {
            (void)wait_exit(std::chrono::seconds(10));
        } catch (...) {
        }
    }

    /// What the server wrote to stdout after its listening line, until it closed stdout (it
    /// exited) or `timeout` passed. Call it once, after the server was asked to stop.
    [[nodiscard]] std::string rest_of_stdout(clock::duration timeout) {
        std::string text;
        const auto deadline = clock::now() + timeout;
        while (read_some(text, deadline)) {
        }
        return text;
    }

    /// Everything the server wrote to stderr so far.
    [[nodiscard]] std::string log() const {
        std::string text;
        char buf[4096];
        for (off_t at = 0; log_fd_ >= 0;) {
            const ssize_t n = ::pread(log_fd_, buf, sizeof buf, at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            text.append(buf, static_cast<std::size_t>(n));
            at += n;
        }
        return text;
    }

    /// Runs `binary` with `args` to completion (at most `timeout`, then SIGKILL) and returns
    /// its exit code, stdout and stderr. For command-line tests: no listening line expected.
    static run_result run(const std::string& binary, const std::vector<std::string>& args,
                          clock::duration timeout = std::chrono::seconds(10)) {
        server_process p;
        p.spawn(binary, args);
        run_result r;
        const auto deadline = clock::now() + timeout;
        while (p.read_some(r.out, deadline)) {
        }
        p.close_out();
        r.exit_code = p.wait_exit(std::max(deadline - clock::now(), clock::duration::zero()) + std::chrono::milliseconds(100));
        if (!r.exit_code) p.kill_now();
        r.err = p.log();
        return r;
    }

private:
    server_process() = default;

    static bool has_option(const std::vector<std::string>& args, const std::string& name) {
        for (const auto& a : args)
            if (a == name || a.rfind(name + "=", 0) == 0) return true;
        return false;
    }

    void spawn(const std::string& binary, const std::vector<std::string>& args) {
        // The stderr file has no name once open: nothing is left behind, even if the test dies.
        char log_template[] = "/tmp/demo_server_stderr.XXXXXX";
        const int log_fd = ::mkostemp(log_template, O_CLOEXEC);
        if (log_fd < 0) throw std::runtime_error(std::string("mkostemp: ") + std::strerror(errno));
        ::unlink(log_template);
        log_fd_ = log_fd;

        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0) {
            throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
        }

        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);  // dup2 clears FD_CLOEXEC
        posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
        posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // no test socket leaks into the server

        // The child starts with default signal dispositions and an empty mask, whatever the
        // test runner did to its own.
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

        std::vector<std::string> argv_storage;
        argv_storage.push_back(binary);
        argv_storage.insert(argv_storage.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : argv_storage) argv.push_back(a.data());
        argv.push_back(nullptr);

        const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, &attr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        ::close(out[1]);
        if (rc != 0) {
            ::close(out[0]);
            pid_ = -1;
            throw std::runtime_error("posix_spawn " + binary + ": " + std::strerror(rc));
        }
        out_fd_ = out[0];
    }

    // Appends what stdout has to `into`. False at EOF, on error, or at the deadline.
    bool read_some(std::string& into, clock::time_point deadline) {
        if (out_fd_ < 0) return false;
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
            if (left <= 0) return false;
            pollfd p{out_fd_, POLLIN, 0};
            const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
            if (n < 0 && errno != EINTR) return false;
            if (n <= 0) continue;
            char buf[4096];
            const ssize_t got = ::read(out_fd_, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;
            into.append(buf, static_cast<std::size_t>(got));
            return true;
        }
    }

    void close_out() noexcept {
        if (out_fd_ >= 0) ::close(out_fd_);
        out_fd_ = -1;
    }

    void close_log() noexcept {
        if (log_fd_ >= 0) ::close(log_fd_);
        log_fd_ = -1;
    }

    // "listening tcp=HOST:PORT http=HOST:PORT"
    void parse_listening_line(const std::string& line) {
        const auto port_of = [&](const std::string& key, std::string& host) -> unsigned short {
            const auto at = line.find(key);
            if (at == std::string::npos) throw std::runtime_error("unexpected listening line: '" + line + "'");
            const auto begin = at + key.size();
            const auto end = line.find(' ', begin);
            const std::string hp = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
            const auto colon = hp.rfind(':');
            if (colon == std::string::npos) throw std::runtime_error("unexpected listening line: '" + line + "'");
            host = hp.substr(0, colon);
            const long port = std::strtol(hp.c_str() + colon + 1, nullptr, 10);
            if (port <= 0 || port > 65535) throw std::runtime_error("bad port in listening line: '" + line + "'");
            return static_cast<unsigned short>(port);
        };
        if (line.rfind("listening ", 0) != 0) throw std::runtime_error("unexpected first line on stdout: '" + line + "'");
        std::string http_host;
        tcp_port_ = port_of("tcp=", host_);
        http_port_ = port_of("http=", http_host);
    }

    pid_t pid_ = -1;
    std::optional<int> status_;
    int out_fd_ = -1;
    int log_fd_ = -1;
    std::string listening_line_;
    std::string host_;
    unsigned short tcp_port_ = 0, http_port_ = 0;
};

}  // namespace demo_test

#endif
