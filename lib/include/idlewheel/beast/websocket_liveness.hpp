// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_BEAST_WEBSOCKET_LIVENESS_HPP
#define IDLEWHEEL_BEAST_WEBSOCKET_LIVENESS_HPP

/** @file
 * @brief idlewheel::beast::websocket_liveness: the whole liveness of one Beast WebSocket session on one wheel entry.
 */

#if defined(IDLEWHEEL_STANDALONE_ASIO)
#error \
    "idlewheel/beast/websocket_liveness.hpp needs Boost.Beast, which works with Boost.Asio only: it cannot be used with IDLEWHEEL_STANDALONE_ASIO"
#endif

#include <idlewheel/beast/websocket_helpers.hpp>
#include <idlewheel/bind_member.hpp>
#include <idlewheel/core/check_config.hpp>
#include <idlewheel/detail/owner_hook.hpp>
#include <idlewheel/detail/owner_of.hpp>
#include <idlewheel/session_liveness.hpp>
#include <idlewheel/wheel_pool.hpp>  // 1.0 brought wheel_pool and per_shard with this header: kept (the pool layer is below beast/)

#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/query.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/system/error_code.hpp>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <type_traits>

namespace idlewheel::detail {

// The loud end of a Beast websocket timeout set after start() (IDLEWHEEL_CHECK_USAGE).
[[noreturn]] inline void beast_timeout_after_start() noexcept {
    std::fputs(
        "idlewheel: websocket::stream_base::timeout set after websocket_liveness::start(): Beast's own timer "
        "would run beside idlewheel's; remove the set_option, or call start() after it (see "
        "idlewheel/beast/websocket_liveness.hpp)\n",
        stderr);
    std::fflush(stderr);
    std::abort();
}

// A websocket_liveness built with no config where none is registered for its stream's
// executor: printed before the constructor throws, so that it reaches the operator even from
// a session whose exception nobody reads (co_spawn(..., detached)).
[[noreturn]] inline void no_liveness_config(const char* what) {
    std::fprintf(stderr, "idlewheel: %s (websocket_liveness's constructor throws std::logic_error)\n", what);
    std::fflush(stderr);
    throw std::logic_error(what);
}

}  // namespace idlewheel::detail

namespace idlewheel::beast {
namespace detail {

// Which websocket_liveness_config the objects of one execution context use: one config
// (one wheel) or one per shard of a pool. An execution-context service per config type, so
// that an object finds its config from its stream's executor alone.
template <class Config>
class liveness_config_service final : public boost::asio::execution_context::service {
public:
    static inline boost::asio::execution_context::id id;  // NOLINT: Asio's service key

    explicit liveness_config_service(boost::asio::execution_context& context)
        : boost::asio::execution_context::service(context) {}

    const Config* single = nullptr;
    per_shard<Config>* shards = nullptr;

private:
    void shutdown() override {}
};

template <class Config, class Executor>
const Config& registered_config(const Executor& ex) {
    auto& context = boost::asio::query(ex, boost::asio::execution::context);
    if (boost::asio::has_service<liveness_config_service<Config>>(context)) {
        const auto& found = boost::asio::use_service<liveness_config_service<Config>>(context);
        if (found.shards != nullptr) {
            if (auto* shard = found.shards->pool().find(ex)) return (*found.shards)[*shard];
            idlewheel::detail::no_liveness_config(
                "idlewheel::beast::websocket_liveness: configs are registered for this io_context's wheel_pool "
                "(use_websocket_liveness), but the stream's executor is not one of its shards' strands: accept "
                "or build the socket on pool.next().get_executor() (where Beast's examples call "
                "net::make_strand(ioc)); or pass the config to the constructor");
        }
        if (found.single != nullptr) return *found.single;
    }
    idlewheel::detail::no_liveness_config(
        "idlewheel::beast::websocket_liveness: no config is registered for the stream's execution context "
        "and this session type: call idlewheel::beast::use_websocket_liveness(ioc, configs) at set-up, or "
        "pass the config to the constructor");
}

}  // namespace detail

template <class Session, class Stream = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>>
class websocket_liveness;

/// What every session of a wheel shares (one per io_context thread, or one per wheel_pool shard:
/// idlewheel::per_shard): the wheel, which member of Session is the stream, the times, the
/// stats, and the optional hook. Must outlive the sessions.
template <class Session, class Stream = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>>
class websocket_liveness_config : public session_liveness_config {
    using owner_hook = idlewheel::detail::owner_hook<Session, liveness_event>;

public:
    /// The hook as a plain function: called with the session and the event.
    using hook_function = void (*)(Session& session, liveness_event event);
    /// The hook as a member pointer, the form of 1.0.
    /// @deprecated Use bind_member<&Session::f>() (or a hook_function); 2.0 drops it.
    using hook_type [[deprecated("use idlewheel::bind_member<&Session::f>()")]] = typename owner_hook::member_pointer;

    /// The arguments come in one order, the same in the three configs whose object finds its
    /// session (member_liveness_config, stream_liveness_config,
    /// beast::websocket_liveness_config): the wheel, the session's member that is the stream
    /// (left out here when each session hands its stream to the object), the options, the hook,
    /// the stats; the hook and the stats may be left out. 1.x's (..., options, stats, hook)
    /// still compiles, deprecated.
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param hook called with the session after the object acted on an event, last: a
    /// function (a captureless lambda converts to it); null for none.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config.
    websocket_liveness_config(wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options,
                              hook_function hook = nullptr, liveness_stats* stats = nullptr)
        : websocket_liveness_config(via<typename owner_hook::by_function>{}, wheel, stream, options, stats,
                                    owner_hook{hook, nullptr}) {}

    /// The same with no hook, the stats given.
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param stats the counters (a `liveness_stats*`).
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Stats, std::enable_if_t<owner_hook::template is_stats_v<Stats, liveness_stats*>, int> = 0>
    websocket_liveness_config(wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options,
                              Stats stats)
        : websocket_liveness_config(via<typename owner_hook::by_function>{}, wheel, stream, options,
                                    static_cast<liveness_stats*>(stats), owner_hook{}) {}

    /// The same, the hook a member function of the session, `bind_member<&Session::on_liveness>()`
    /// (called directly).
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param hook the member function called after the object acted on an event, last.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    websocket_liveness_config(wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options,
                              member_hook<Member> hook, liveness_stats* stats = nullptr)
        : websocket_liveness_config(via<typename owner_hook::template direct<Member>>{}, wheel, stream, options, stats,
                                    owner_hook{}) {
        (void)hook;
    }

    /// The same without naming the stream member: each session then hands its stream to the
    /// liveness object's constructor (websocket_liveness(config, owner, stream)), which needs
    /// no access to a private member from where the config is made.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook called with the session after the object acted on an event, last; null for none.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config.
    websocket_liveness_config(wheel_timer& wheel, const session_liveness_options& options, hook_function hook = nullptr,
                              liveness_stats* stats = nullptr)
        : websocket_liveness_config(wheel, nullptr, options, hook, stats) {}

    /// The same without naming the stream member, with no hook, the stats given.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param stats the counters (a `liveness_stats*`).
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Stats, std::enable_if_t<owner_hook::template is_stats_v<Stats, liveness_stats*>, int> = 0>
    websocket_liveness_config(wheel_timer& wheel, const session_liveness_options& options, Stats stats)
        : websocket_liveness_config(wheel, nullptr, options, hook_function{nullptr},
                                    static_cast<liveness_stats*>(stats)) {}

    /// The same without naming the stream member, the hook `bind_member<&Session::on_liveness>()`.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param hook the member function called after the object acted on an event, last.
    /// @param stats the counters, or null.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    websocket_liveness_config(wheel_timer& wheel, const session_liveness_options& options, member_hook<Member> hook,
                              liveness_stats* stats = nullptr)
        : websocket_liveness_config(wheel, nullptr, options, hook, stats) {}

    /// 1.x's order, the stats before the hook (a function, a lambda or a null).
    /// @deprecated Write (wheel, stream, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook called with the session after the object acted on an event, last; null for none.
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Stats, class Hook,
              std::enable_if_t<owner_hook::template is_stats_then_function_v<Stats, Hook, liveness_stats*>, int> = 0>
    [[deprecated("the hook comes before the stats: (wheel, stream, options, hook, stats)")]] websocket_liveness_config(
        wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options, Stats stats, Hook hook)
        : websocket_liveness_config(wheel, stream, options, static_cast<hook_function>(hook),
                                    static_cast<liveness_stats*>(stats)) {}

    /// 1.x's order, the stats before the hook `bind_member<&Session::on_liveness>()`.
    /// @deprecated Write (wheel, stream, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function called after the object acted on an event, last.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    [[deprecated("the hook comes before the stats: (wheel, stream, options, hook, stats)")]] websocket_liveness_config(
        wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options, liveness_stats* stats,
        member_hook<Member> hook)
        : websocket_liveness_config(wheel, stream, options, hook, stats) {}

    /// 1.x's order without naming the stream member, the stats before the hook.
    /// @deprecated Write (wheel, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook called with the session after the object acted on an event, last; null for none.
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Stats, class Hook,
              std::enable_if_t<owner_hook::template is_stats_then_function_v<Stats, Hook, liveness_stats*>, int> = 0>
    [[deprecated("the hook comes before the stats: (wheel, options, hook, stats)")]] websocket_liveness_config(
        wheel_timer& wheel, const session_liveness_options& options, Stats stats, Hook hook)
        : websocket_liveness_config(wheel, nullptr, options, static_cast<hook_function>(hook),
                                    static_cast<liveness_stats*>(stats)) {}

    /// 1.x's order without naming the stream member, the stats before the hook
    /// `bind_member<&Session::on_liveness>()`.
    /// @deprecated Write (wheel, options, hook, stats); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function called after the object acted on an event, last.
    /// @throws std::invalid_argument as session_liveness_config.
    template <auto Member>
    [[deprecated("the hook comes before the stats: (wheel, options, hook, stats)")]] websocket_liveness_config(
        wheel_timer& wheel, const session_liveness_options& options, liveness_stats* stats, member_hook<Member> hook)
        : websocket_liveness_config(wheel, nullptr, options, hook, stats) {}

    /// The form of 1.0: the hook as a member pointer, `&Session::on_liveness`, called through it
    /// (in 1.x's order, the stats before the hook).
    /// @deprecated Use bind_member<&Session::on_liveness>(); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param stream the session's member that is the websocket::stream.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function called after the object acted on an event, last.
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Hook, std::enable_if_t<owner_hook::template is_member_pointer_v<Hook>, int> = 0>
    [[deprecated("use idlewheel::bind_member<&Session::f>() as the hook")]] websocket_liveness_config(
        wheel_timer& wheel, Stream Session::*stream, const session_liveness_options& options, liveness_stats* stats,
        Hook hook)
        : websocket_liveness_config(via<typename owner_hook::by_member_pointer>{}, wheel, stream, options, stats,
                                    owner_hook{nullptr, hook}) {}

    /// The form of 1.0 without naming the stream member: the hook as a member pointer.
    /// @deprecated Use bind_member<&Session::on_liveness>(); 2.0 drops this constructor.
    /// @param wheel the wheel; must outlive the config.
    /// @param options the times.
    /// @param stats the counters, or null.
    /// @param hook the member function called after the object acted on an event, last.
    /// @throws std::invalid_argument as session_liveness_config.
    template <class Hook, std::enable_if_t<owner_hook::template is_member_pointer_v<Hook>, int> = 0>
    [[deprecated("use idlewheel::bind_member<&Session::f>() as the hook")]] websocket_liveness_config(
        wheel_timer& wheel, const session_liveness_options& options, liveness_stats* stats, Hook hook)
        : websocket_liveness_config(via<typename owner_hook::by_member_pointer>{}, wheel, nullptr, options, stats,
                                    owner_hook{nullptr, hook}) {}

private:
    friend class websocket_liveness<Session, Stream>;

    template <class Call>
    struct via {};  // which way dispatch calls the hook

    template <class Call>
    websocket_liveness_config(via<Call>, wheel_timer& wheel, Stream Session::*stream,
                              const session_liveness_options& options, liveness_stats* stats, owner_hook hook)
        : session_liveness_config(wheel, options, {&dispatch<Call>, this}, stats), stream_(stream), hook_(hook) {}

    template <class Call>
    static void dispatch(void* context, session_liveness& core, liveness_event e);

    Stream Session::*stream_;  // or null: learnt from the first session (stream_at_)
    owner_hook hook_;
    idlewheel::detail::owner_offset owner_;      // the liveness object in its Session
    idlewheel::detail::owner_offset stream_at_;  // the stream in its Session
};

/**
 * The whole liveness of one Beast WebSocket session —
 * handshake deadline, idleness, ping/pong, close deadline — in one member of 64 bytes or
 * less, on one wheel entry, with every rule of idlewheel/beast/websocket_helpers.hpp applied for you.
 * Its rules are session_liveness's, which idlewheel::beast::set_option(ws, timeout) runs
 * too (core/liveness_rules.hpp): this object is the form that hands the verdicts to the
 * session, with its own times (a ping interval, a pong timeout, a close timeout).
 *
 * @tparam Session the session type: holds this object as a member, derives from
 * std::enable_shared_from_this<Session>.
 * @tparam Stream the websocket::stream type (default over a plain tcp::socket).
 *
 * Besides the members below it offers these of session_liveness, which it uses privately:
 * stop(), on_inbound(), current(), phase, has_verdict(), verdict(), expired(), expiry(),
 * awaiting_pong(), peer_closing() and ping_in_flight().
 *
 *     struct session : std::enable_shared_from_this<session> {
 *         ws::stream<tcp::socket> ws;
 *         idlewheel::beast::websocket_liveness<session> live;
 *         session(tcp::socket s, const idlewheel::beast::websocket_liveness_config<session>& c)
 *             : ws(std::move(s)), live(c, *this) {}
 *         // live.start() before async_accept; `if (!live.accepted(ec)) return;` in its handler;
 *         // `if (!live.on_read(ec)) return;` in every read handler.
 *     };
 *     // once per thread: which member is the stream, the times, the stats
 *     idlewheel::beast::websocket_liveness_config<session> config(wheel, &session::ws,
 *         {.handshake_timeout = 5s, .idle_timeout = 60s, .ping_interval = 15s, .pong_timeout = 10s,
 *          .jitter = 2s, .close_timeout = 5s}, &stats);
 *
 * @par Completion
 * What it does on its own (so a session cannot get it wrong):
 *  - start() (call it at accept, before async_accept reads the HTTP request) arms the
 *    handshake deadline: a client trickling its request a byte at a time is dropped when it
 *    passes. It turns Beast's own timeouts off (idlewheel replaces them) and installs the
 *    stream's control callback: every ping, pong and close frame from the peer counts as a
 *    sign of life (never as a message), and a close frame from the peer means we never
 *    start one of our own.
 *  - accepted(ec) / on_read(ec) say whether to go on: false on an error, and false after a
 *    verdict even if the operation succeeded (a deadline that passed in the same turn of the
 *    io_context as the success: the socket is already being dropped).
 *  - handshake_step(ec): the same for a handshake that comes before the WebSocket upgrade
 *    (TLS, below); the handshake deadline keeps running.
 *  - Beast's websocket timeouts stay off: a stream_base::timeout other than "none" set after
 *    start() (timeout::suggested, say) would run Beast's own timer beside this object's.
 *    accepted(ec) looks: with the library's checks on (IDLEWHEEL_CHECK_USAGE,
 *    core/check_config.hpp: on unless NDEBUG) it prints what happened and what to do and
 *    calls std::abort(); without them it turns Beast's timeouts off again. Set Beast's
 *    options before start(), or leave the timeout out.
 *  - send_ping: sent with async_ping only if no ping is in flight and no close under way
 *    (Beast allows one). Pings are never counted as our writes or messages.
 *  - idle: the close handshake, 1000 "idle timeout", once, and only if the peer has not
 *    started one; the close deadline runs from then. close(reason) starts an application close
 *    under the same rules. An idle verdict while the stream is not open (before the upgrade
 *    completed, with the options' idle_in_handshake; or after Beast failed it) has no
 *    WebSocket to close: the socket is closed at once, as for a handshake timeout.
 *  - dead_peer, handshake_timeout, close_timeout: the socket is closed at once; every pending
 *    operation completes with operation_aborted.
 * The session's optional hook `void on_liveness(liveness_event)` (given to the config as
 * `idlewheel::bind_member<&session::on_liveness>()`) is called after that, last: it may log,
 * count, or drop the last reference to the session.
 *
 * @par TLS
 * Over TLS (websocket::stream<boost::beast::ssl_stream<idlewheel::beast::tcp_stream>>, say),
 * call start() at TCP accept, before the TLS handshake. The handshake deadline then bounds the TLS
 * handshake and the WebSocket upgrade together, from accept to accepted(): one deadline, one
 * wheel entry, nothing on the tcp_stream (leave its expiry at never).
 *
 *     void on_run() {                          // on the session's strand, just accepted
 *         live.start();                        // the handshake deadline from now
 *         ws.next_layer().async_handshake(ssl::stream_base::server,
 *             beast::bind_front_handler(&session::on_tls_handshake, shared_from_this()));
 *     }
 *     void on_tls_handshake(beast::error_code ec) {
 *         if (!live.handshake_step(ec)) return;  // failed, or past the handshake deadline
 *         ws.async_accept(beast::bind_front_handler(&session::on_accept, shared_from_this()));
 *     }
 *     void on_accept(beast::error_code ec) {
 *         if (!live.accepted(ec)) return;      // idle and heartbeat from now
 *         do_read();
 *     }
 *
 * @par Thread safety
 * Requirements: Session derives from std::enable_shared_from_this and is owned by a
 * shared_ptr (a ping or close in flight holds one); the liveness object is a member of the
 * Session (its owner is found from its address: see detail/owner_of.hpp); everything happens
 * on the wheel's executor, but constructing it (it touches no wheel until start()). The
 * session may be destroyed elsewhere (a listener's thread dropping the last reference) only
 * once the object is stopped: accepted(ec) and on_read(ec) stop it on an error, a verdict
 * stops it, and any other end of the session (a failed write) calls stop(). Beast's websocket
 * timeouts stay off.
 */
template <class Session, class Stream>
class websocket_liveness : private session_liveness {
public:
    using config_type = websocket_liveness_config<Session, Stream>;  ///< Its config.
    using error_code = boost::system::error_code;                    ///< Beast's error code.

    /// The liveness of `owner`, of which it is a member; the stream is the config's member.
    /// Touches no wheel: it may run on any thread (e.g. a listener's, before the session
    /// reaches its strand). The config must name the stream member (an assert).
    /// @param config the config; must outlive the object.
    /// @param owner the session that holds this object.
    websocket_liveness(const config_type& config, Session& owner) noexcept : session_liveness(config) {
        assert(config.stream_ != nullptr && "idlewheel: this config names no stream member: pass the stream");
        config.owner_.learn(owner, *this);
        config.stream_at_.learn(owner, owner.*(config.stream_));
    }

    /// The same, with `stream`, a member of `owner` (at the same place in every session).
    /// @param config the config; must outlive the object.
    /// @param owner the session that holds this object.
    /// @param stream the session's websocket::stream.
    websocket_liveness(const config_type& config, Session& owner, Stream& stream) noexcept
        : session_liveness(config) {
        config.owner_.learn(owner, *this);
        config.stream_at_.learn(owner, stream);
    }

    /// The same, its config found from the stream's executor: the one registered for this
    /// Session and Stream type with use_websocket_liveness(), on that execution context (with
    /// a pool: the config of the shard whose strand the stream's executor is). Nothing to pass
    /// through the session's constructors. Touches no wheel.
    /// @param owner the session that holds this object.
    /// @param stream the session's websocket::stream (built: its executor tells the config).
    /// @throws std::logic_error if none is registered, or the stream's executor is not a
    /// shard's strand of the registered pool (the message is printed on stderr first).
    websocket_liveness(Session& owner, Stream& stream)
        : websocket_liveness(detail::registered_config<config_type>(stream.get_executor()), owner, stream) {}

    /// At accept, before async_accept: the handshake deadline runs from now; Beast's own
    /// timeouts off; control frames reported (see above). Reads the clock once.
    /// @throws system_error error::too_many_pending or error::stopped (then stopped).
    void start() {
        Stream& ws = stream();
        ws.set_option(boost::beast::websocket::stream_base::timeout{
            boost::beast::websocket::stream_base::none(), boost::beast::websocket::stream_base::none(), false});
        ws.control_callback([this](boost::beast::websocket::frame_type frame, boost::beast::string_view) {
            if (frame == boost::beast::websocket::frame_type::close)
                on_peer_close();
            else
                on_inbound();
        });
        start_handshake();
    }

    /// In the handler of a handshake that runs before the WebSocket upgrade (the TLS
    /// handshake of a wss session: ssl_stream's async_handshake), after start(): true if the
    /// session may go on to async_accept; the handshake deadline keeps running from start()
    /// (it is not re-armed: it bounds this step and the upgrade together). False on an error
    /// (the object stops: the session ends) or when the handshake deadline has already passed
    /// (its verdict came first: the socket is being dropped, even if this step succeeded), or
    /// if the object is not in its handshake (not started, stopped). Reads no clock; only an
    /// error touches the wheel (stop(), O(1)).
    /// @param ec the handshake step's error code.
    /// @return whether to go on.
    [[nodiscard]] bool handshake_step(error_code ec) noexcept {
        if (ec) {
            stop();
            return false;
        }
        return current() == phase::handshake;
    }

    /// In async_accept's handler: true if the session may go on (success, in time); idle and
    /// heartbeat run from now. False on an error (the session ends) or after the handshake
    /// deadline passed (the success came too late: the socket is being dropped).
    ///
    /// It also checks that Beast's websocket timeouts are still off (on success and on
    /// error): a stream_base::timeout other than none set after start() makes it print what
    /// happened on stderr and call std::abort() when IDLEWHEEL_CHECK_USAGE is on (the
    /// default unless NDEBUG), or turn them off again when it is off.
    /// @param ec async_accept's error code.
    /// @return whether to go on.
    /// @throws system_error as basic_session_liveness::start().
    [[nodiscard]] bool accepted(error_code ec) {
        keep_beast_timeouts_off();
        if (ec) {
            stop();
            return false;
        }
        return handshake_done();
    }

    /// In every async_read handler: true if a message arrived and the session is open (a store,
    /// no clock, no timer). False on an error (closed by either side, dropped: the session
    /// ends) or while closing (do not write back; Beast's close drains the rest).
    /// @param ec the read's error code.
    /// @return whether to go on.
    [[nodiscard]] bool on_read(error_code ec) noexcept {
        if (ec) {
            stop();
            return false;
        }
        if (current() != phase::open) return false;
        session_liveness::on_read();
        return true;
    }

    /// Starts an application close with `reason`, under the same rules as the idle close (once,
    /// not after the peer started one, with the close deadline). False if none was started.
    /// The close frame is sent with async_close, its handler holding shared_from_this().
    /// @param reason the close code and reason.
    /// @return whether a close was started.
    bool close(const boost::beast::websocket::close_reason& reason) {
        if (!start_close()) return false;
        send_close(reason);
        return true;
    }

    /// Closes the socket at once (server shutdown); no verdict, no more events.
    void drop() noexcept {
        stop();
        idlewheel::beast::drop(stream());
    }

    using session_liveness::awaiting_pong;
    using session_liveness::current;
    using session_liveness::expired;
    using session_liveness::expiry;
    using session_liveness::has_verdict;
    using session_liveness::on_inbound;
    using session_liveness::peer_closing;
    using session_liveness::phase;
    using session_liveness::ping_in_flight;
    using session_liveness::stop;
    using session_liveness::verdict;

    /// The session that holds this object.
    [[nodiscard]] Session& owner() noexcept { return config().owner_.template owner<Session>(*this); }

private:
    friend class websocket_liveness_config<Session, Stream>;

    [[nodiscard]] const config_type& config() const noexcept {
        return static_cast<const config_type&>(session_liveness::config());
    }
    [[nodiscard]] Stream& stream() noexcept { return config().stream_at_.template member<Stream>(owner()); }

    // Beast's timeouts must still be off (start() turned them off): see accepted().
    void keep_beast_timeouts_off() {
        using boost::beast::websocket::stream_base;
        Stream& ws = stream();
        stream_base::timeout t{};
        ws.get_option(t);
        if (t.handshake_timeout == stream_base::none() && t.idle_timeout == stream_base::none() && !t.keep_alive_pings)
            return;
#if IDLEWHEEL_CHECK_USAGE
        idlewheel::detail::beast_timeout_after_start();
#else
        ws.set_option(stream_base::timeout{stream_base::none(), stream_base::none(), false});
#endif
    }

    void send_close(const boost::beast::websocket::close_reason& reason) {
        Stream& ws = stream();
        if (!ws.is_open()) return;
        ws.async_close(reason, [self = owner().shared_from_this()](error_code) {});
    }

    // What the object does itself, before the session's hook hears of it.
    void act(liveness_event e) {
        switch (e) {
            case liveness_event::send_ping: {
                Stream& ws = stream();
                if (ping_in_flight() || current() != phase::open || peer_closing() || !ws.is_open()) return;
                set_ping_in_flight(true);
                ws.async_ping({}, [self = owner().shared_from_this(), this](error_code) { set_ping_in_flight(false); });
                return;
            }
            case liveness_event::idle:
                if (!stream().is_open()) {  // no WebSocket (yet, with idle_in_handshake): nothing to close
                    idlewheel::beast::drop(stream());
                    return;
                }
                if (!peer_closing()) send_close(idle_close_reason());
                return;
            case liveness_event::dead_peer:
            case liveness_event::handshake_timeout:
            case liveness_event::close_timeout: idlewheel::beast::drop(stream()); return;
        }
    }
};

template <class Session, class Stream>
template <class Call>
void websocket_liveness_config<Session, Stream>::dispatch(void* context, session_liveness& core, liveness_event e) {
    static_assert(
        std::is_base_of_v<std::enable_shared_from_this<Session>, Session>,
        "idlewheel::beast::websocket_liveness: Session must derive from std::enable_shared_from_this<Session>");
    const auto& self = *static_cast<const websocket_liveness_config*>(context);
    auto& live = static_cast<websocket_liveness<Session, Stream>&>(core);
    live.act(e);
    Call::call(self.hook_, live.owner(), e);  // last: it may end the session
}

/// Registers `configs` (one per shard of a wheel_pool on `io`) for the websocket_liveness
/// objects of Session and Stream built on `io` without a config
/// (websocket_liveness(owner, stream)): each uses the config of the shard whose strand its
/// stream's executor is. Call it once at set-up, before the threads run, as use_wheel_pool;
/// calling it again replaces the registration. `configs` must outlive the objects' use.
///
///     idlewheel::per_shard<idlewheel::beast::websocket_liveness_config<session, ws_stream>> configs(pool, options);
///     idlewheel::beast::use_websocket_liveness(ioc, configs);
///     // in the session:  live_(*this, ws_)
///
/// @param io the io_context.
/// @param configs the configs, on a pool of that io_context.
/// @throws std::invalid_argument if the pool is not on `io`.
template <class Session, class Stream>
void use_websocket_liveness(boost::asio::io_context& io, per_shard<websocket_liveness_config<Session, Stream>>& configs) {
    if (&boost::asio::query(configs.pool()[0].get_executor(), boost::asio::execution::context) != &io)
        throw std::invalid_argument("idlewheel::beast::use_websocket_liveness: the configs' pool is not on this io_context");
    auto& service = boost::asio::use_service<detail::liveness_config_service<websocket_liveness_config<Session, Stream>>>(io);
    service.single = nullptr;
    service.shards = &configs;
}

/// Registers `config` (on one wheel of `context`: one io_context on one thread) for the
/// websocket_liveness objects of Session and Stream built on `context` without a config.
/// Once at set-up; calling it again replaces the registration. `config` must outlive the
/// objects' use.
/// @param context the execution context (the io_context).
/// @param config the config.
template <class Session, class Stream>
void use_websocket_liveness(boost::asio::execution_context& context, const websocket_liveness_config<Session, Stream>& config) {
    auto& service = boost::asio::use_service<detail::liveness_config_service<websocket_liveness_config<Session, Stream>>>(context);
    service.shards = nullptr;
    service.single = &config;
}

}  // namespace idlewheel::beast

#endif
