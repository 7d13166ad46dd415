// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// idlewheel_tcp_stream_bench: boost::beast::tcp_stream against idlewheel::beast::tcp_stream
// (issue 24 item 6), over real loopback TCP connections, on one thread's io_context.
//
//  - read/<contender>/N: the cost of one read with a deadline at N connections. Every one of
//    the N connections always has a read pending (as a server's do while they wait for the
//    next request), so Beast's timer queue holds N timers. One iteration is one sweep: a child
//    process, which holds the N peer ends, writes 16 bytes to every connection (untimed; the
//    benchmark thread waits for it), then the io_context runs until all N reads have completed,
//    each completion handler starting the next read on its connection
//    (expires_after(30s) + async_read_some). Only that run is timed, in CPU time of this
//    thread (manual time), so ns per read = the sweep's CPU time / N. Contenders:
//      raw          tcp::socket::async_read_some, no deadline: the read itself
//      beast        boost::beast::tcp_stream, expires_after(30s) + async_read_some
//      idlewheel    idlewheel::beast::tcp_stream, the same calls
//    The deadline's cost is <stream> - raw.
//  - paired/<stream>/N: the same stream with and without a deadline, in sweeps a few
//    milliseconds apart (on, off, on, off, ...; an untimed sweep at each switch), so that the
//    machine's drift hits both alike: ns_with_deadline, ns_without_deadline (expiry never: the
//    stream's own cost over raw) and ns_deadline_cost, their difference.
//  - memory/<kind>/N: sizeof, and heap bytes per connection for N connections (glibc
//    mallinfo2 footprint and malloc-counted usable bytes, alloc_count.hpp), with the
//    connected tcp::socket moved in (its reactor state, allocated when the socket was
//    assigned, is the same for all and not counted), once just built ("built") and once with
//    a read pending with a 30 s deadline ("armed", tcp_stream kinds only).
//
// Connections are made once per process (the child connects, this process accepts) and the
// sockets are moved into each case's streams and back out (release_socket()), so every case
// reads the same connections. The N of a read case is at most the connections made.
//
// Flags besides Google Benchmark's: --sizes=1000,10000,19000 (read cases), --memory_n=1000.
// The process needs max(sizes) + ~10 descriptors, the child as many: the soft limit is
// raised to the hard one; 19 000 is the most that fits under a hard limit of 20 000.

#include "alloc_count.hpp"

#include <program_support/fd_limit.hpp>

// websocket_liveness.hpp before tcp_stream.hpp: the other order does not compile at this
// commit (beast.hpp and websocket_liveness.hpp name detail:: from inside idlewheel::beast, which
// finds tcp_stream.hpp's idlewheel::beast::detail once that exists).
#include <idlewheel/beast/websocket_liveness.hpp>
#include <idlewheel/beast/tcp_stream.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio is compiled separately (idlewheel_asio): its SSL part here, once
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace net = boost::asio;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

constexpr std::size_t bytes_per_write = 16;
constexpr std::size_t read_buffer = 64;

[[noreturn]] void die(const char* what) {
    std::perror(what);
    std::exit(2);
}

// ---------------------------------------------------------------------------------------
// The peer process: holds the other end of every connection and writes on command.

struct peer_process {
    int control = -1;  // socketpair to the child
    pid_t pid = -1;

    // Asks the child to write bytes_per_write bytes to each of the first n connections and
    // waits until it has.
    void write_all(std::size_t n) const {
        const std::uint32_t cmd = static_cast<std::uint32_t>(n);
        if (::write(control, &cmd, sizeof cmd) != sizeof cmd) die("control write");
        char ack = 0;
        if (::read(control, &ack, 1) != 1) die("control read");
    }
    void stop() {
        if (pid <= 0) return;
        const std::uint32_t cmd = 0xffffffffu;
        (void)!::write(control, &cmd, sizeof cmd);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

[[noreturn]] void run_child(int control, std::uint16_t port, std::size_t n) {
    std::vector<int> fds;
    fds.reserve(n);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (std::size_t i = 0; i < n; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("child socket");
        if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) die("child connect");
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // no Nagle wait on our small writes
        fds.push_back(fd);
    }
    std::array<char, bytes_per_write> data{};
    data.fill('x');
    for (;;) {
        std::uint32_t cmd = 0;
        if (::read(control, &cmd, sizeof cmd) != sizeof cmd || cmd == 0xffffffffu) std::_Exit(0);
        const std::size_t count = std::min<std::size_t>(cmd, fds.size());
        for (std::size_t i = 0; i < count; ++i)
            if (::write(fds[i], data.data(), data.size()) != static_cast<ssize_t>(data.size())) die("child write");
        const char ack = 'k';
        if (::write(control, &ack, 1) != 1) die("child ack");
    }
}

// Makes n loopback connections; returns this side's descriptors (accepted) and the child.
std::vector<int> connect_pairs(std::size_t n, peer_process& peer) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0) die("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) die("bind");
    if (::listen(listener, 4096) != 0) die("listen");
    socklen_t len = sizeof addr;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) die("socketpair");
    const pid_t pid = ::fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        ::close(listener);
        ::close(sv[0]);
        run_child(sv[1], ntohs(addr.sin_port), n);
    }
    ::close(sv[1]);
    peer.control = sv[0];
    peer.pid = pid;
    std::vector<int> fds;
    fds.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const int fd = ::accept(listener, nullptr, nullptr);
        if (fd < 0) die("accept");
        fds.push_back(fd);
    }
    ::close(listener);
    return fds;
}

// ---------------------------------------------------------------------------------------
// Everything the cases share: one io_context (one thread), its wheel, the connections.

// The child is forked before any Asio object exists (it inherits no reactor).
struct world {
    peer_process peer;
    std::vector<int> fds;
    net::io_context io{1};
    idlewheel::wheel_timer wheel{io};
    std::vector<tcp::socket> sockets;

    explicit world(std::size_t connections) : fds(connect_pairs(connections, peer)) {
        idlewheel::beast::use_wheel(io, wheel);
        sockets.reserve(fds.size());
        for (const int fd : fds) {
            sockets.emplace_back(io);
            sockets.back().assign(tcp::v4(), fd);
        }
    }
    // Reset rather than close the connections (SO_LINGER 0): no TIME_WAIT left to the next run.
    ~world() {
        const linger reset{1, 0};
        for (auto& s : sockets)
            if (s.is_open()) ::setsockopt(s.native_handle(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        peer.stop();
    }
};

world* the_world = nullptr;

double thread_cpu_seconds() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What a read does about its deadline before it starts: expires_after(30s) (on); nothing, the
// expiry staying as it is (off); expires_never() (clear: the sweep that turns deadlines off).
enum class deadline_mode { on, off, clear };

// How a contender builds its stream from a socket, gives the socket back, starts a read.
struct raw_kind {
    using stream = tcp::socket;
    static constexpr bool deadline = false;
    static void set_deadline(stream&, deadline_mode) {}
    static tcp::socket release(stream& s) { return std::move(s); }
    static void cancel(stream& s) { s.cancel(); }
};
template <bool Deadline>
struct beast_kind {
    using stream = boost::beast::tcp_stream;
    static constexpr bool deadline = Deadline;
    static void set_deadline(stream& s, deadline_mode m) {
        if constexpr (Deadline) {
            if (m == deadline_mode::on)
                s.expires_after(30s);
            else if (m == deadline_mode::clear)
                s.expires_never();
        }
    }
    static tcp::socket release(stream& s) { return s.release_socket(); }
    static void cancel(stream& s) { s.cancel(); }
};
template <bool Deadline>
struct idlewheel_kind {
    using stream = idlewheel::beast::tcp_stream;
    static constexpr bool deadline = Deadline;
    static void set_deadline(stream& s, deadline_mode m) {
        if constexpr (Deadline) {
            if (m == deadline_mode::on)
                s.expires_after(30s);
            else if (m == deadline_mode::clear)
                s.expires_never();
        }
    }
    static tcp::socket release(stream& s) { return s.release_socket(); }
    static void cancel(stream& s) { s.cancel(); }
};

template <class Kind>
struct connection {
    explicit connection(tcp::socket&& s) : stream(std::move(s)) {}
    typename Kind::stream stream;
    std::array<char, read_buffer> buffer{};
};

template <class Kind>
struct reader {
    std::vector<std::unique_ptr<connection<Kind>>> conns;
    std::uint64_t completed = 0;
    std::uint64_t aborted = 0;
    std::uint64_t bytes = 0;
    deadline_mode mode = deadline_mode::on;

    void start(std::size_t i) {
        connection<Kind>& c = *conns[i];
        Kind::set_deadline(c.stream, mode);
        c.stream.async_read_some(net::buffer(c.buffer), [this, i](boost::system::error_code ec, std::size_t n) {
            if (ec) {
                ++aborted;
                return;
            }
            ++completed;
            bytes += n;
            start(i);
        });
    }
};

// One sweep: the child writes to the first n connections (untimed), then the io_context runs
// until n more reads have completed. Returns the CPU time of the run.
template <class Kind>
double sweep(world& w, reader<Kind>& r, std::size_t n) {
    w.peer.write_all(n);
    const std::uint64_t target = r.completed + n;
    const double c0 = thread_cpu_seconds();
    while (r.completed < target) w.io.run_one();
    w.io.poll();  // what the reads left ready (Beast: the aborted timer waits)
    return thread_cpu_seconds() - c0;
}

template <class Kind, bool Paired = false>
void read_case(benchmark::State& st) {
    world& w = *the_world;
    const auto n = static_cast<std::size_t>(st.range(0));
    if (n > w.sockets.size()) {
        st.SkipWithError("more connections than were made (--sizes)");
        return;
    }
    reader<Kind> r;
    r.conns.reserve(n);
    for (std::size_t i = 0; i < n; ++i) r.conns.push_back(std::make_unique<connection<Kind>>(std::move(w.sockets[i])));
    for (std::size_t i = 0; i < n; ++i) r.start(i);  // every connection has a read pending
    w.io.restart();
    w.io.poll();  // the reads find no data and wait

    double cpu = 0;
    std::uint64_t reads = 0;
    if constexpr (!Paired) {
        for (auto _ : st) {
            const double spent = sweep(w, r, n);
            st.SetIterationTime(spent);
            cpu += spent;
            reads += n;
        }
    } else {
        // Each iteration: deadlines on, then off (or off, then on: the order alternates), each
        // as a transition sweep (untimed: its completions are of reads started in the other
        // mode) and a timed sweep. The iteration's time is the sum of both timed sweeps; the
        // deadline's cost is their difference, from sweeps a few milliseconds apart.
        double on = 0, off = 0, timed = 0;
        bool on_first = true;
        for (auto _ : st) {
            for (const bool with : {on_first, !on_first}) {
                r.mode = with ? deadline_mode::on : deadline_mode::clear;
                (void)sweep(w, r, n);
                r.mode = with ? deadline_mode::on : deadline_mode::off;
                const double spent = sweep(w, r, n);
                (with ? on : off) += spent;
                timed += spent;
            }
            st.SetIterationTime(timed);
            timed = 0;
            on_first = !on_first;
            reads += n;
        }
        cpu = on + off;
        st.counters["ns_with_deadline"] = benchmark::Counter(on * 1e9 / static_cast<double>(reads));
        st.counters["ns_without_deadline"] = benchmark::Counter(off * 1e9 / static_cast<double>(reads));
        st.counters["ns_deadline_cost"] = benchmark::Counter((on - off) * 1e9 / static_cast<double>(reads));
        reads *= 2;
    }
    const std::uint64_t bytes = r.bytes, completed = r.completed;
    for (auto& c : r.conns) Kind::cancel(c->stream);
    while (r.aborted < n) w.io.run_one();
    w.io.poll();
    for (std::size_t i = 0; i < n; ++i) w.sockets[i] = Kind::release(r.conns[i]->stream);
    r.conns.clear();
    w.io.poll();

    if (bytes != completed * bytes_per_write) st.SkipWithError("a read did not get exactly one write's bytes");
    st.counters["ns_per_read"] = benchmark::Counter(cpu * 1e9 / static_cast<double>(reads));
    st.counters["reads"] = benchmark::Counter(static_cast<double>(reads));
    st.SetItemsProcessed(static_cast<std::int64_t>(reads));
}

// ---------------------------------------------------------------------------------------
// Memory per connection.

// A WebSocket session as examples/websocket_server_async.cpp holds one on our stream: the
// stream and the 64-byte websocket_liveness.
struct ws_session : std::enable_shared_from_this<ws_session> {
    using ws_stream = websocket::stream<idlewheel::beast::tcp_stream>;
    using liveness = idlewheel::beast::websocket_liveness<ws_session, ws_stream>;
    ws_session(tcp::socket&& s, const liveness::config_type& c) : ws(std::move(s)), live(c, *this, ws) {}
    ws_stream ws;
    liveness live;
};

net::ssl::context& tls_context() {
    static net::ssl::context ctx(net::ssl::context::tls_server);
    return ctx;
}

// Builds one object of a kind from a socket; gives the socket back; for "armed", starts a
// read with a 30 s deadline.
struct mem_beast_tcp {
    using type = boost::beast::tcp_stream;
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s)); }
    static tcp::socket& sock(type& t) { return t.socket(); }
    static tcp::socket release(type& t) { return t.release_socket(); }
};
struct mem_idlewheel_tcp {
    using type = idlewheel::beast::tcp_stream;
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s)); }
    static tcp::socket& sock(type& t) { return t.socket(); }
    static tcp::socket release(type& t) { return t.release_socket(); }
};
struct mem_beast_ws {
    using type = websocket::stream<boost::beast::tcp_stream>;
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s)); }
    static tcp::socket release(type& t) { return t.next_layer().release_socket(); }
};
struct mem_idlewheel_ws {
    using type = ws_session;
    static ws_session::liveness::config_type& config() {
        static ws_session::liveness::config_type c(the_world->wheel,
                                                   {.handshake_timeout = 5s,
                                                    .idle_timeout = 60s,
                                                    .ping_interval = 15s,
                                                    .pong_timeout = 10s,
                                                    .jitter = 2s,
                                                    .close_timeout = 5s});
        return c;
    }
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s), config()); }
    static tcp::socket release(type& t) { return t.ws.next_layer().release_socket(); }
};
struct mem_beast_ssl {
    using type = boost::beast::ssl_stream<boost::beast::tcp_stream>;
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s), tls_context()); }
    static tcp::socket release(type& t) { return t.next_layer().release_socket(); }
};
struct mem_idlewheel_ssl {
    using type = boost::beast::ssl_stream<idlewheel::beast::tcp_stream>;
    static type* make(void* at, tcp::socket&& s) { return new (at) type(std::move(s), tls_context()); }
    static tcp::socket release(type& t) { return t.next_layer().release_socket(); }
};

template <class M, bool Armed>
void memory_case(benchmark::State& st) {
    using T = typename M::type;
    world& w = *the_world;
    const auto n = static_cast<std::size_t>(st.range(0));
    if (n > w.sockets.size()) {
        st.SkipWithError("more connections than were made");
        return;
    }
    for (auto _ : st) {
        // The objects' own storage is allocated before the window: the window sees only what
        // they allocate themselves.
        std::unique_ptr<std::byte[]> storage(new std::byte[n * sizeof(T) + alignof(T)]);
        auto* base = reinterpret_cast<std::byte*>(
            (reinterpret_cast<std::uintptr_t>(storage.get()) + alignof(T) - 1) / alignof(T) * alignof(T));
        std::vector<T*> objects(n);
        std::vector<std::array<char, read_buffer>> buffers(Armed ? n : 0);
        std::uint64_t aborted = 0;
        w.io.restart();
        const auto w0 = bench::alloc_count::start();
        for (std::size_t i = 0; i < n; ++i) {
            objects[i] = M::make(base + i * sizeof(T), std::move(w.sockets[i]));
            if constexpr (Armed) {
                objects[i]->expires_after(30s);
                objects[i]->async_read_some(net::buffer(buffers[i]),
                                            [&aborted](boost::system::error_code, std::size_t) { ++aborted; });
            }
        }
        const auto window = bench::alloc_count::stop(w0);
        if constexpr (Armed) {
            for (std::size_t i = 0; i < n; ++i) objects[i]->cancel();
            while (aborted < n) w.io.run_one();
        }
        w.io.poll();
        for (std::size_t i = 0; i < n; ++i) {
            w.sockets[i] = M::release(*objects[i]);
            objects[i]->~T();
        }
        w.io.poll();
        const auto per = [n](std::int64_t v) {
            return benchmark::Counter(static_cast<double>(v) / static_cast<double>(n));
        };
        st.counters["sizeof"] = benchmark::Counter(static_cast<double>(sizeof(T)));
        st.counters["heap_footprint_per_conn"] = per(window.footprint);
        st.counters["heap_counted_per_conn"] = per(window.usable);
        st.counters["allocs_per_conn"] = per(window.blocks);
        if constexpr (std::is_same_v<T, ws_session>)
            st.counters["sizeof_liveness"] = benchmark::Counter(static_cast<double>(sizeof(ws_session::liveness)));
        // What websocket::stream's impl holds of its own timer (impl/stream_impl.hpp), in its heap bytes.
        st.counters["sizeof_steady_timer"] = benchmark::Counter(static_cast<double>(sizeof(net::steady_timer)));
    }
}

std::vector<std::int64_t> parse_sizes(const std::string& s) {
    std::vector<std::int64_t> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stoll(item));
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::int64_t> sizes{1000, 10000, 19000};
    std::int64_t memory_n = 1000;
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--sizes=", 8) == 0)
            sizes = parse_sizes(argv[i] + 8);
        else if (std::strncmp(argv[i], "--memory_n=", 11) == 0)
            memory_n = std::stoll(argv[i] + 11);
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    const auto limit = program_support::raise_fd_limit();
    const auto connections = static_cast<std::size_t>(std::max(memory_n, *std::max_element(sizes.begin(), sizes.end())));
    if (connections + 16 > limit.soft) {
        std::fprintf(stderr, "need %zu descriptors, the limit is %llu (hard %llu)\n", connections + 16, limit.soft,
                     limit.hard);
        return 2;
    }
    world w(connections);
    the_world = &w;
    // Shared set-up of the memory cases, outside their windows: the TLS context, the liveness config.
    (void)tls_context();
    (void)mem_idlewheel_ws::config();

    for (const auto n : sizes) {
        const auto reg = [n](const char* name, void (*fn)(benchmark::State&)) {
            benchmark::RegisterBenchmark(name, fn)->Arg(n)->UseManualTime()->Unit(benchmark::kNanosecond);
        };
        reg("read/raw", &read_case<raw_kind>);
        reg("read/beast", &read_case<beast_kind<true>>);
        reg("read/idlewheel", &read_case<idlewheel_kind<true>>);
        reg("paired/beast", &read_case<beast_kind<true>, true>);
        reg("paired/idlewheel", &read_case<idlewheel_kind<true>, true>);
    }
    const auto mem = [memory_n](const char* name, void (*fn)(benchmark::State&)) {
        benchmark::RegisterBenchmark(name, fn)->Arg(memory_n)->Iterations(1)->Repetitions(1)->Unit(
            benchmark::kMillisecond);
    };
    mem("memory/beast_tcp_stream/built", &memory_case<mem_beast_tcp, false>);
    mem("memory/idlewheel_tcp_stream/built", &memory_case<mem_idlewheel_tcp, false>);
    mem("memory/beast_tcp_stream/armed", &memory_case<mem_beast_tcp, true>);
    mem("memory/idlewheel_tcp_stream/armed", &memory_case<mem_idlewheel_tcp, true>);
    mem("memory/ws_beast_tcp_stream/built", &memory_case<mem_beast_ws, false>);
    mem("memory/ws_idlewheel_tcp_stream_liveness/built", &memory_case<mem_idlewheel_ws, false>);
    mem("memory/ssl_beast_tcp_stream/built", &memory_case<mem_beast_ssl, false>);
    mem("memory/ssl_idlewheel_tcp_stream/built", &memory_case<mem_idlewheel_ssl, false>);

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
