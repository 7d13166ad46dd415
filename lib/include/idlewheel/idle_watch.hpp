// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IDLE_WATCH_HPP
#define IDLEWHEEL_IDLE_WATCH_HPP

/** @file
 * @brief idlewheel::idle_watch: Netty's IdleStateHandler for an Asio session, on a shared wheel.
 */

#include <idlewheel/callback.hpp>
#include <idlewheel/core/destruction_guard.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/liveness_access.hpp>
#include <idlewheel/liveness_stats.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace idlewheel {

/// The kind of idleness an idle_watch reports.
enum class idle_kind : unsigned {
    reader = 0,  ///< no inbound data for idle_options::reader
    writer = 1,  ///< no completed write for idle_options::writer
    all = 2      ///< neither for idle_options::all
};

/// A name for logs: "reader idle", "writer idle", "all idle".
/// @param k the kind.
/// @return a static string.
[[nodiscard]] constexpr const char* to_string(idle_kind k) noexcept {
    switch (k) {
        case idle_kind::reader: return "reader idle";
        case idle_kind::writer: return "writer idle";
        case idle_kind::all: return "all idle";
    }
    return "idle";
}

/// The times of an idle_watch; 0 turns a kind off.
struct idle_options {
    std::chrono::nanoseconds reader{0};  ///< no inbound data for this long; 0 = off
    std::chrono::nanoseconds writer{0};  ///< no completed write for this long; 0 = off
    std::chrono::nanoseconds all{0};     ///< neither for this long; 0 = off
    /// Netty's observeOutput: write progress reported with on_write_progress() (a slow
    /// consumer draining a large write) counts as write activity.
    bool observe_output = false;
};

/// What an idle_watch calls: `function(context, kind, first)` (idlewheel::callback;
/// bind_member<&T::f>(self) converts to it).
using idle_handler = callback<void(idle_kind kind, bool first)>;

/// An idle_handler that calls `(self->*Member)(kind, first)`.
/// @deprecated Use idlewheel::bind_member (the same, for every handler shape); kept for 1.x.
/// @tparam Member a pointer to a member function of T taking (idle_kind, bool).
/// @param self the object; must outlive the watch's reports.
/// @return the handler.
template <auto Member, class T>
[[deprecated("use idlewheel::bind_member")]] [[nodiscard]] constexpr idle_handler idle_member(T* self) noexcept {
    return bind_member<Member>(self);
}

/**
 * Netty's IdleStateHandler for an Asio session, on a shared wheel (idlewheel::idle_watch is
 * `basic_idle_watch<wheel_timer>`).
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 *
 * Three kinds of idleness, each with its own time (0 turns it off):
 *  - reader: no inbound data for `reader`;
 *  - writer: no completed write for `writer`;
 *  - all:    neither for `all`.
 *
 *     struct session : std::enable_shared_from_this<session> {
 *         idlewheel::idle_watch idle{wheel, idlewheel::bind_member<&session::on_idle>(this),
 *                                    {.reader = 30s}};
 *         void on_idle(idlewheel::idle_kind kind, bool first) { close(); }
 *         void on_read(...)  { idle.on_read();  ... }   // a store: no timer, no clock
 *         void on_write(...) { idle.on_write(); ... }
 *     };
 *
 * @par Cost
 * on_read()/on_write() never touch the Asio timer, never post, never allocate and never
 * read the clock: they store the wheel's current activity epoch (core/activity_epochs.hpp). The
 * wheel closes an epoch at the first tick boundary after it was used, with one clock read for
 * all sessions; nothing is visited per session. The watch's own wheel entry is re-armed only
 * when it comes due (Netty's lazy scheme): then it re-arms for the remaining time, or reports.
 *
 * @par Precision
 * A report never comes before the watched kind has been quiet for its full time.
 * It comes at most two ticks (plus wake-up delays) after that: activity is stamped at the tick
 * boundary after it, and the deadline is rounded up to a tick. When wake-ups are on time and
 * the idle time is a whole number of ticks, that is at most one tick, as for any timeout.
 * Activity that happened before a check, even if not stamped yet, always counts: no false
 * reports.
 *
 * After a report the watch keeps reporting every period while the stretch lasts (first ==
 * false), until activity of that kind, stop(), or destruction (Netty's isFirst).
 *
 * @par Completion
 * The handler runs on the wheel's executor, from the wheel's completion handler (a wheel
 * callback: wheel_timer, Completion), once per kind that is due, with first == true for the
 * first report of a quiet stretch.
 *
 * @par Thread safety
 * Like the wheel, the watch belongs to the wheel's executor.
 *
 * @par Lifetime
 * Destroying the watch unlinks it in O(1); its handler never runs afterwards. The handler may
 * destroy the watch (close the session) — the watch notices and returns at once.
 *
 * @par Errors
 * Limits: start() and set_options() put the watch's entry in the wheel and throw
 * error::too_many_pending if the wheel is at wheel_options::max_pending (or error::stopped).
 * Once running, the watch keeps its place: re-arming its own entry after a check never counts
 * against max_pending, so a full wheel cannot silently end a watch that is running. If the
 * wheel is stopped, the watch ends with it (running() turns false at its next check).
 *
 * Outcomes are counted in the liveness_stats given at construction (none if null).
 */
template <class Wheel>
class basic_idle_watch {
public:
    using wheel_type = Wheel;                   ///< The wheel type.
    using duration = typename Wheel::duration;  ///< The wheel's duration.

    /// A watch on `wheel` that calls `handler`, counting its reports in `*stats` (if not
    /// null). It watches nothing until start().
    /// @param wheel the wheel; must outlive the watch.
    /// @param handler what a report calls (bind_member<&T::f>(self) for a member function).
    /// @param options the times (rounded up to the wheel's duration, saturated).
    /// @param stats the counters, or null; must outlive the watch.
    basic_idle_watch(Wheel& wheel, idle_handler handler, const idle_options& options = {},
                     liveness_stats* stats = nullptr) noexcept
        : wheel_(&wheel), handler_(handler), stats_(stats) {
        apply(options);
    }
    basic_idle_watch(const basic_idle_watch&) = delete;             ///< Not copyable (nor movable).
    basic_idle_watch& operator=(const basic_idle_watch&) = delete;  ///< Not copyable (nor movable).
    /// Unlinks the watch's entry in O(1): the handler never runs afterwards. Allowed inside
    /// the handler (the watch notices and returns at once).
    ~basic_idle_watch() = default;  // the node unlinks itself; a check under way is told

    /// Starts (or restarts) watching: every kind counts as active now; first flags reset.
    /// Reads the clock once.
    /// @throws system_error error::too_many_pending or error::stopped (then not running).
    void start();

    /// Stops watching; no report until start(). O(1).
    void stop() noexcept;

    /// Same as start(): activity of every kind as of now, first flags reset.
    /// @throws system_error as start().
    void reset() { start(); }

    /// Inbound data arrived. A load and a store; no clock, no timer.
    void on_read() noexcept { activity_[read] = access::activity_mark(*wheel_); }
    /// A write completed.
    void on_write() noexcept { activity_[write] = access::activity_mark(*wheel_); }
    /// Part of a write went out (a slow consumer is draining); counts only with observe_output.
    void on_write_progress() noexcept {
        if (observe_output_) activity_[progress] = access::activity_mark(*wheel_);
    }

    /// Per-session override of the times; takes effect at once (a kind whose new time has
    /// already passed reports at the next tick). On a running watch (its handler included)
    /// this moves its own entry, which never counts against max_pending.
    /// @param options the new times.
    /// @throws system_error error::stopped if the wheel was stopped (then not running).
    void set_options(const idle_options& options);

    /// The times in use (rounded up to the wheel's duration).
    [[nodiscard]] idle_options options() const noexcept;
    /// True between start() and stop() (false again if the wheel refused or was stopped).
    [[nodiscard]] bool running() const noexcept { return running_; }

    /// When the watch next looks at its session (its wheel entry's wheel_timer::expiry()): the
    /// earliest time a report can come. The watch re-arms lazily, so activity since the entry
    /// was armed is counted only then: it may then re-arm instead of reporting.
    /// time_point::max() if not running (or inside its handler, before it re-arms).
    [[nodiscard]] typename Wheel::time_point expiry() const noexcept { return wheel_->expiry(node_); }
    /// The wheel the watch is on.
    [[nodiscard]] Wheel& wheel() const noexcept { return *wheel_; }

private:
    using access = detail::liveness_access<Wheel>;
    enum activity_kind : unsigned { read, write, progress };
    static constexpr duration never = duration::min();
    static constexpr duration off = duration::zero();

    static std::chrono::nanoseconds to_ns(duration d) noexcept;

    void apply(const idle_options& o) noexcept;

    // The latest activity of idle kind `kind` as of `now`: a time no earlier than it (marks
    // of the epoch still open count as now), so never a false report.
    [[nodiscard]] duration last_activity(unsigned kind, duration now) const noexcept;

    // Turns marks of closed epochs into times while they still resolve exactly (see
    // activity_epochs::max_mark_age).
    void settle() noexcept;

    // When kind `k` is next due: a full period after its latest activity or its latest report.
    [[nodiscard]] duration due(unsigned k, duration now) const noexcept;

    void arm_for(duration now, bool rearm);

    // Arms; if the wheel refuses (stopped, or full for a first arm), the watch is not running.
    void arm_or_stop(duration now, bool rearm);

    void count(unsigned kind) noexcept;

    // The wheel entry came due: report every kind that has been quiet for its full time.
    void check();

    // on_read() / on_write() use only these two: kept next to each other, a touch writes one
    // cache line of the session.
    Wheel* wheel_;
    std::int64_t activity_[3] = {};  // read, write, progress: an activity mark or a time (wheel_core)
    idle_handler handler_;
    timer_node node_{bind_member<&basic_idle_watch::check>(this)};
    duration time_[3] = {};
    duration last_report_[3] = {never, never, never};
    std::uint64_t generation_ = 0;
    liveness_stats* stats_;
    detail::destruction_notice destruction_;
    bool running_ = false;
    bool observe_output_ = false;
};

/// The idle watch for idlewheel::wheel_timer (steady_clock).
using idle_watch = basic_idle_watch<wheel_timer>;

}  // namespace idlewheel

#include <idlewheel/impl/idle_watch.hpp>

#endif
