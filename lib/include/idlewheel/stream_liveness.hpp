// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_STREAM_LIVENESS_HPP
#define IDLEWHEEL_STREAM_LIVENESS_HPP

/** @file
 * @brief idlewheel::stream_liveness: session_liveness for a raw stream socket (a line protocol over TCP).
 */

#include <idlewheel/bind_member.hpp>
#include <idlewheel/detail/asio.hpp>
#include <idlewheel/detail/lowest_socket.hpp>
#include <idlewheel/detail/owner_hook.hpp>
#include <idlewheel/detail/owner_of.hpp>
#include <idlewheel/session_liveness.hpp>

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#include <asio/ip/tcp.hpp>
#include <asio/socket_base.hpp>
#else
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/socket_base.hpp>
#endif

#include <chrono>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace idlewheel {

template <class Session, class Socket = net::ip::tcp::socket, class Wheel = wheel_timer>
class stream_liveness;

/// What every session of a thread shares (see websocket_liveness_config). `Wheel` is
/// wheel_timer unless a test drives a manual clock.
template <class Session, class Socket = net::ip::tcp::socket, class Wheel = wheel_timer>
class stream_liveness_config : public basic_session_liveness_config<Wheel> {
    using base = basic_session_liveness_config<Wheel>;
    using owner_hook = detail::owner_hook<Session, liveness_event>;

public:
    /// The hook as a plain function: called with the session and the event.
    using hook_function = void (*)(Session& session, liveness_event event);
    /// The hook as a member pointer, the form of 1.0.
    /// @deprecated Use bind_member<&Session::f>() (or a hook_function); 2.0 drops it.
    using hook_type [[deprecated("use idlewheel::bind_member<&Session::f>()")]] = typename owner_hook::member_pointer;

    /// The arguments come in one order, the same in the three configs whose object finds its
    /// session (member_liveness_config, stream_liveness_config,
    /// beast::websocket_liveness_config): the wheel, the session's member that holds the stream
    /// (not in member_liveness_config), the options, the hook, the stats; the hook and the
    /// stats may be left out. 1.x's (..., options, stats, hook) still compiles, deprecated.
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param hook what every event calls after the object acted on it, with the session: a
    /// function (a captureless lambda converts to it); null for none (then no ping_interval).
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config, or if ping_interval is set
    /// without a hook (nothing would send the ping).
    stream_liveness_config(Wheel& wheel, Socket Session::*socket, const session_liveness_options& options,
                           hook_function hook = nullptr, liveness_stats* stats = nullptr)
        : base(wheel, options, {&dispatch<typename owner_hook::by_function>, this}, stats),
          socket_(socket),
          hook_{hook, nullptr} {
        if (hook == nullptr) require_no_ping(options);
    }

    /// The same with no hook (then no ping_interval), the stats given.
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param stats the counters (a `liveness_stats*`).
    /// @throws std::invalid_argument as above.
    template <class Stats, std::enable_if_t<owner_hook::template is_stats_v<Stats, liveness_stats*>, int> = 0>
    stream_liveness_config(Wheel& wheel, Socket Session::*socket, const session_liveness_options& options, Stats stats)
        : stream_liveness_config(wheel, socket, options, hook_function{nullptr}, static_cast<liveness_stats*>(stats)) {}

    /// The same, the hook a member function of the session, `bind_member<&Session::on_liveness>()`
    /// (called directly).
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param hook the member function every event calls after the object acted on it.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    stream_liveness_config(Wheel& wheel, Socket Session::*socket, const session_liveness_options& options,
                           member_hook<Member> hook, liveness_stats* stats = nullptr)
        : base(wheel, options, {&dispatch<typename owner_hook::template direct<Member>>, this}, stats),
          socket_(socket) {
        (void)hook;
    }

    /// 1.x's order, the stats before the hook (a function, a lambda or a null).
    /// @deprecated Write (wheel, socket, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook what every event calls after the object acted on it; null for none.
    /// @throws std::invalid_argument as above.
    template <class Stats, class Hook,
              std::enable_if_t<owner_hook::template is_stats_then_function_v<Stats, Hook, liveness_stats*>, int> = 0>
    [[deprecated("the hook comes before the stats: (wheel, socket, options, hook, stats)")]] stream_liveness_config(
        Wheel& wheel, Socket Session::*socket, const session_liveness_options& options, Stats stats, Hook hook)
        : stream_liveness_config(wheel, socket, options, static_cast<hook_function>(hook),
                                 static_cast<liveness_stats*>(stats)) {}

    /// 1.x's order, the stats before the hook `bind_member<&Session::on_liveness>()`.
    /// @deprecated Write (wheel, socket, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function every event calls after the object acted on it.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    [[deprecated("the hook comes before the stats: (wheel, socket, options, hook, stats)")]] stream_liveness_config(
        Wheel& wheel, Socket Session::*socket, const session_liveness_options& options, liveness_stats* stats,
        member_hook<Member> hook)
        : stream_liveness_config(wheel, socket, options, hook, stats) {}

    /// The form of 1.0: the hook as a member pointer, `&Session::on_liveness`, called through it
    /// (in 1.x's order, the stats before the hook).
    /// @deprecated Use bind_member<&Session::on_liveness>(); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param socket the session's member that holds the stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function every event calls after the object acted on it.
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Hook, std::enable_if_t<owner_hook::template is_member_pointer_v<Hook>, int> = 0>
    [[deprecated("use idlewheel::bind_member<&Session::f>() as the hook")]] stream_liveness_config(
        Wheel& wheel, Socket Session::*socket, const session_liveness_options& options, liveness_stats* stats, Hook hook)
        : base(wheel, options, {&dispatch<typename owner_hook::by_member_pointer>, this}, stats),
          socket_(socket),
          hook_{nullptr, hook} {
        if (hook_.member == nullptr) require_no_ping(options);
    }

private:
    friend class stream_liveness<Session, Socket, Wheel>;

    static void require_no_ping(const session_liveness_options& options) {
        if (options.ping_interval > std::chrono::nanoseconds::zero())
            throw std::invalid_argument("idlewheel::stream_liveness: a ping_interval needs a hook that sends the ping");
    }

    template <class Call>
    static void dispatch(void* context, basic_session_liveness<Wheel>& core, liveness_event e);

    Socket Session::*socket_;
    owner_hook hook_;
    detail::owner_offset owner_;
};

/**
 * session_liveness for a raw stream socket (a line protocol over
 * TCP): an optional handshake deadline (a login line, a TLS handshake), reader idleness, an
 * application-level ping, and a close deadline, in one member on one wheel entry. Works with
 * Boost.Asio and standalone Asio.
 *
 * @tparam Session the session type that holds this object as a member.
 * @tparam Socket the stream the config's member pointer names (default a TCP socket).
 * @tparam Wheel wheel_timer unless a test drives a manual clock.
 *
 *     struct session : std::enable_shared_from_this<session> {
 *         tcp::socket socket;
 *         idlewheel::stream_liveness<session> live;
 *         session(tcp::socket s, const idlewheel::stream_liveness_config<session>& c)
 *             : socket(std::move(s)), live(c, *this) {}
 *         void on_liveness(idlewheel::liveness_event e) {   // the hook: the config names it
 *             if (e == idlewheel::liveness_event::send_ping) write_line("PING");   // your protocol's ping
 *         }
 *         // live.start() (or start_handshake() + handshake_done()); in every read handler:
 *         // `if (!live.on_read(ec)) return;`
 *     };
 *     idlewheel::stream_liveness_config<session> config(wheel, &session::socket,
 *         {.idle_timeout = 60s, .ping_interval = 15s, .pong_timeout = 10s},
 *         idlewheel::bind_member<&session::on_liveness>(), &stats);   // wheel, member, options, hook, stats
 *
 * Besides the members below it offers these of basic_session_liveness, which it uses
 * privately: start(), start_handshake(), stop(), on_inbound(), current(), has_verdict(),
 * verdict(), expired() and awaiting_pong().
 *
 * @par Completion
 * What the object does itself, before the hook hears of an event: on idle, dead_peer,
 * handshake_timeout and close_timeout it closes the socket (pending operations complete with
 * operation_aborted). send_ping does nothing but tell the hook (with a ping_interval the hook
 * is required): send your protocol's ping and report its answer, like any byte from the peer,
 * with on_read() (a message) or on_inbound() (a sign of life only). close() starts a graceful
 * close: it shuts the sending side down, and the close deadline closes the socket if the peer
 * has not closed its side by then (on_read() sees the end of file: the session ends).
 *
 * @par Thread safety
 * Requirements as websocket_liveness: a member of its Session, on the wheel's executor. The
 * hook is called last and may drop the last reference to the session.
 *
 * @par The stream
 * The `Socket` parameter (the stream the config's member pointer names) may be any stream
 * over a TCP socket, not only the socket itself: a Beast stream (boost::beast::tcp_stream,
 * idlewheel::beast::tcp_stream), a TLS stream over either (boost::asio::ssl::stream,
 * boost::beast::ssl_stream), a websocket::stream over any of them. The object reaches the
 * socket as Beast's get_lowest_layer() does: through next_layer() to the lowest layer, then
 * its socket() if it has one; every verdict closes that socket, and close() shuts down its
 * sending side. Over TLS that is a TCP half-close without a TLS close_notify (the peer sees
 * the end of the stream, or a truncation): for a clean TLS close, send close_notify yourself
 * (async_shutdown) and call close() when it completes, or leave the close to the idle verdict.
 */
template <class Session, class Socket, class Wheel>
class stream_liveness : private basic_session_liveness<Wheel> {
    using core = basic_session_liveness<Wheel>;

public:
    using config_type = stream_liveness_config<Session, Socket, Wheel>;  ///< Its config.
    using phase = typename core::phase;  ///< basic_session_liveness::phase.

    /// A stopped object of `config`, held by `owner` (a member of it, at the same offset in
    /// every Session).
    /// @param config the config; must outlive the object.
    /// @param owner the session that holds this object.
    stream_liveness(const config_type& config, Session& owner) noexcept : core(config) {
        config.owner_.learn(owner, *this);
    }

    /// In every read handler: true if bytes arrived and the session is open (a store). False
    /// on an error or end of file (the object stops: no verdict, no more events) or while
    /// closing.
    /// @param ec the read's error code.
    /// @return whether to go on reading.
    [[nodiscard]] bool on_read(error_code ec) noexcept {
        if (ec) {
            core::stop();
            return false;
        }
        if (core::current() != phase::open) return false;
        core::on_read();
        return true;
    }

    /// In a handshake operation's handler (after start_handshake()): true to go on. An error
    /// stops the object; a success reported after the handshake deadline passed is false
    /// (basic_session_liveness::handshake_done()).
    /// @param ec the handshake's error code.
    /// @return whether the session is open.
    /// @throws system_error as basic_session_liveness::start().
    [[nodiscard]] bool accepted(error_code ec) {
        if (ec) {
            core::stop();
            return false;
        }
        return core::handshake_done();
    }

    /// A graceful close: shuts the sending side down; the close deadline bounds the rest.
    /// False if the session was not open (closing already, or ended).
    bool close() {
        if (!core::start_close()) return false;
        error_code ignored;
        detail::lowest_socket(socket()).shutdown(net::socket_base::shutdown_send, ignored);
        return true;
    }

    /// Closes the socket at once; no verdict, no more events.
    void drop() noexcept {
        core::stop();
        error_code ignored;
        detail::lowest_socket(socket()).close(ignored);
    }

    using core::awaiting_pong;
    using core::current;
    using core::expired;
    using core::has_verdict;
    using core::on_inbound;
    using core::start;
    using core::start_handshake;
    using core::stop;
    using core::verdict;

    /// The session that holds this object.
    [[nodiscard]] Session& owner() noexcept { return config().owner_.template owner<Session>(*this); }

private:
    friend class stream_liveness_config<Session, Socket, Wheel>;

    [[nodiscard]] const config_type& config() const noexcept { return static_cast<const config_type&>(core::config()); }
    [[nodiscard]] Socket& socket() noexcept { return owner().*(config().socket_); }
};

template <class Session, class Socket, class Wheel>
template <class Call>
void stream_liveness_config<Session, Socket, Wheel>::dispatch(void* context, basic_session_liveness<Wheel>& core,
                                                              liveness_event e) {
    const auto& self = *static_cast<const stream_liveness_config*>(context);
    auto& live = static_cast<stream_liveness<Session, Socket, Wheel>&>(core);
    if (e != liveness_event::send_ping) {
        error_code ignored;
        detail::lowest_socket(live.socket()).close(ignored);
    }
    Call::call(self.hook_, live.owner(), e);  // last: it may end the session
}

}  // namespace idlewheel

#endif
