// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_REPEATING_TIMER_HPP
#define IDLEWHEEL_REPEATING_TIMER_HPP

/** @file
 * @brief idlewheel::repeating_timer: a callback every period, on the wheel.
 */

#include <idlewheel/callback.hpp>
#include <idlewheel/error.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <idlewheel/detail/asio.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace idlewheel {

/// How the next round of a repeating_timer is placed (see the top of this header).
enum class repeat_mode {
    fixed_delay,  ///< the next round starts when the callback returns
    fixed_rate,   ///< the next round is due at this round's deadline + its delay (no drift)
};

/// The adjust hook: called for every round with the timer's period, returns that round's
/// delay (SOFAJRaft's adjustTimeout; Raft randomizes its election timeout here). It is called
/// once per round placed: by start(), restart(), reset() of a running timer, and once per run
/// (a fixed-rate run that coalesces missed rounds calls it once and skips them in steps of
/// its result). Must not throw. A result <= 0 counts as the clock's smallest unit. An
/// idlewheel::callback, `function(context, period)`; bind_member<&T::f>(self) converts to it.
using repeat_adjust = callback<std::chrono::nanoseconds(std::chrono::nanoseconds period) noexcept>;

/// A repeat_adjust that calls `(self->*Member)(period)`. If the member throws,
/// std::terminate is called.
/// @deprecated Use idlewheel::bind_member (the same, for every handler shape); kept for 1.x.
/// @tparam Member a pointer to a member function of T taking and returning std::chrono::nanoseconds.
/// @param self the object; must outlive the timer's rounds.
/// @return the hook.
template <auto Member, class T>
[[deprecated("use idlewheel::bind_member")]] [[nodiscard]] constexpr repeat_adjust adjust_member(T* self) noexcept {
    return bind_member<Member>(self);
}

/// Construction options of a repeating_timer.
struct repeat_options {
    repeat_mode mode = repeat_mode::fixed_delay;  ///< fixed_delay (the default) or fixed_rate
    /// Each round's delay from the period; none (the default): the period itself.
    repeat_adjust adjust{nullptr, nullptr};
};

/**
 * A callback every period, on the wheel (idlewheel::repeating_timer is
 * `basic_repeating_timer<wheel_timer>`). SOFAJRaft's
 * RepeatedTimer (Raft's vote, election, step-down and snapshot timers, on Netty's
 * HashedWheelTimer) with the same operations: start, stop, restart, reset(period),
 * run_once_now, and an adjust hook that computes each round's delay from the period.
 *
 * @tparam Wheel the wheel type (a basic_wheel_timer).
 *
 *     struct follower {
 *         void on_election_timeout();
 *         std::chrono::nanoseconds randomized(std::chrono::nanoseconds base) noexcept;  // [base, 2 base)
 *         idlewheel::repeating_timer election{wheel, idlewheel::bind_member<&follower::on_election_timeout>(this),
 *                                             150ms, {.adjust = idlewheel::bind_member<&follower::randomized>(this)}};
 *     };
 *     election.start();      // first round: randomized(150ms) from now
 *     election.reset();      // heard from the leader: a fresh round from now
 *     election.stop();       // no callback until the next start()
 *
 * Intrusive like timer_node: it holds one node of the wheel, and a round is an O(1) relink
 * of that node, never an allocation. (run_once_now() posts a handler through Asio, and
 * allocates once per timer, at its first call, the token that lets that handler notice the
 * timer's destruction.)
 *
 * @par Modes (repeat_options::mode)
 *  - fixed_delay: the next round starts when the callback returns (SOFAJRaft's behaviour).
 *  - fixed_rate: round k+1 is due at round k's deadline + its delay, whenever the callback
 *    ran: no drift. If a run comes late enough that later rounds are already due (a slow
 *    callback, a busy io_context, a suspended process), those rounds are coalesced into the
 *    run and counted: missed() inside the callback, missed_total() in all. The next round is
 *    the first one still in the future.
 *
 * @par Precision
 * Precision is the wheel's (wheel_timer.hpp): a round never runs before its deadline and at
 * most one tick (plus the io_context's scheduling delay) after it. A round reads the clock
 * once, so this holds on a clock_read::per_tick wheel too. Periods of any duration type are
 * rounded up to the wheel clock's unit (never early) and saturate: hours::max() is a round
 * that never comes.
 *
 * @par Completion
 * The callback runs on the wheel's executor, from the wheel's completion handler (a wheel
 * callback: wheel_timer, Completion), or from the handler run_once_now() posts to the wheel's
 * executor.
 *
 * What a call inside the callback means. Every operation means inside the callback what it
 * means outside; the timer only decides the next round itself if the callback did not:
 *  - stop(): the run in progress finishes; no next round.
 *  - restart(), reset(p), run_once_now(), or start() after a stop(): the round they start
 *    replaces the one the timer would have scheduled (fixed-delay: its delay counts from that
 *    call, not from the callback's return).
 *  - destroying the timer: allowed; the timer touches nothing of itself afterwards.
 * The callback is never reentered by the wheel. wheel_timer::expire_all() inside a callback
 * the wheel runs queues the next round behind it, like every entry (it then runs ahead of
 * time, right after); inside a callback the wheel did not start (run_once_now()'s), where
 * expire_all() would run the round at once, the round waits for its deadline instead.
 *
 * @par Errors
 * Exceptions: if the callback throws, the next round is scheduled (unless the callback stopped
 * or destroyed the timer) before the exception leaves the wheel's handler and so
 * io_context::run(): nothing stops silently. The adjust hook must not throw (it is noexcept).
 *
 * The wheel: a running timer holds one entry in the wheel (its next round, or a placeholder
 * while a run_once_now() is posted), except while the callback of a fixed-delay round the
 * wheel ran is running: its entry is out then, and is put back when the callback returns.
 * Putting it back (and every move of a running timer's entry) uses the liveness objects'
 * exemption (wheel_options::max_pending): it never counts against max_pending, so a full wheel
 * never takes a running timer away, and pending() may exceed max_pending by one per such
 * timer; only start() and restart() of a timer that is not running can be refused
 * (system_error with error::too_many_pending). Each round counts once in the wheel's
 * stats().scheduled. The wheel's stop() (or destruction, inside the callback too) drops or
 * refuses that entry like every other: the timer is then not running, no callback runs (a
 * posted run_once_now() included), and start() / restart() on the stopped wheel throw
 * system_error with error::stopped.
 *
 * @par Thread safety
 * Like the wheel's nodes, a timer is used on the wheel's executor only.
 *
 * @par Lifetime
 * The wheel must outlive every call of the timer; destroying the timer is allowed at any
 * time, before or after the wheel, inside or outside its callback.
 */
template <class Wheel>
class basic_repeating_timer {
public:
    using wheel_type = Wheel;                   ///< The wheel type.
    using duration = typename Wheel::duration;  ///< The wheel's duration.

    /// A stopped timer that will call `callback` every `period` once started.
    /// @throws std::invalid_argument if `period`, rounded up to the wheel clock's unit and
    /// saturated, is not > 0 (zero, negative, NaN).
    /// Postcondition: !running(), period() is `period` rounded up, runs() == 0.
    /// @param wheel the wheel; must outlive every call of the timer.
    /// @param callback what each round calls.
    /// @param period any std::chrono duration.
    /// @param options mode and adjust hook.
    template <class Rep, class Period>
    basic_repeating_timer(Wheel& wheel, timer_callback callback, std::chrono::duration<Rep, Period> period,
                          const repeat_options& options = {});

    basic_repeating_timer(const basic_repeating_timer&) = delete;             ///< Not copyable (nor movable).
    basic_repeating_timer& operator=(const basic_repeating_timer&) = delete;  ///< Not copyable (nor movable).

    /// Unschedules its round in O(1); a posted run_once_now() is dropped. Allowed at any time,
    /// including inside its own callback and after the wheel's destruction.
    ~basic_repeating_timer();

    /// Starts the first round from now: due after adjust(period()). Does nothing if running().
    /// @throws system_error error::stopped (the wheel was stopped) or error::too_many_pending
    /// (the wheel's max_pending): then the timer stays stopped.
    /// Postcondition (no exception): running().
    void start();

    /// Stops: no callback runs until the next start() or restart() (a run_once_now() posted
    /// and not yet run is dropped). Inside the callback, the run in progress finishes and no
    /// next round is scheduled. Returns whether it was running. O(1).
    /// Postcondition: !running().
    bool stop() noexcept;

    /// Starts a fresh round from now, whether running or not: the pending round (or posted
    /// run_once_now()) is dropped, and the next one is due after adjust(period()) from now;
    /// a fixed-rate timer takes its new phase from here.
    /// @throws system_error as start(), only if the timer was not running.
    /// Postcondition (no exception): running().
    void restart();

    /// Sets the period for every later round and, if running(), restart()s with it (SOFAJRaft's
    /// reset(timeoutMs)); a stopped timer only keeps the period for its next start().
    /// @throws std::invalid_argument as the constructor (nothing changes then). Never
    /// refused by the wheel: a running timer already holds its entry.
    /// @param period the new period, any std::chrono duration.
    template <class Rep, class Period>
    void reset(std::chrono::duration<Rep, Period> period);

    /// restart() if running(), else nothing (SOFAJRaft's reset()). Never throws.
    void reset() noexcept;

    /// Runs the callback as soon as possible, then starts a new round (SOFAJRaft's
    /// runOnceNow): the pending round is dropped, a handler is posted to the wheel's executor
    /// (the callback never runs inside this call), and that handler runs the callback and
    /// places the next round as a round that was due then (fixed-delay: the delay from the
    /// callback's return; fixed-rate: from the run). Several calls before the handler runs
    /// make one run. stop(), restart(), reset() or destruction before the handler runs cancel
    /// the run. Returns true if a run is posted; false (and does nothing) if !running().
    /// @throws std::bad_alloc if the post cannot allocate (then nothing changes).
    bool run_once_now();

    /// True from start() / restart() until stop(), or until the wheel was stopped or
    /// destroyed; true inside the callback unless the callback stopped it.
    [[nodiscard]] bool running() const noexcept { return node_.pending() || in_round_; }

    /// When its next round is due (wheel_timer::expiry() of its entry: the start of the tick
    /// the round's deadline falls in). time_point::max() if not running, while a fixed-delay
    /// round's callback runs (the next round starts when it returns), and while a
    /// run_once_now() is posted (that run comes as soon as the io_context runs it).
    [[nodiscard]] typename Wheel::time_point expiry() const noexcept {
        return role_ == role::round ? wheel_->expiry(node_) : Wheel::time_point::max();
    }

    /// The period (rounded up to the wheel clock's unit).
    [[nodiscard]] duration period() const noexcept { return period_; }
    /// The mode (repeat_options::mode).
    [[nodiscard]] repeat_mode mode() const noexcept { return mode_; }

    /// Callbacks run since construction (each run counts once, however many rounds it
    /// coalesced).
    [[nodiscard]] std::uint64_t runs() const noexcept { return runs_; }
    /// Fixed-rate: rounds coalesced into the run in progress (inside the callback) or the
    /// latest run: rounds that were already due when it ran, besides its own. Fixed-delay: 0.
    [[nodiscard]] std::uint64_t missed() const noexcept { return missed_; }
    /// Sum of missed() over every run since construction. runs() + missed_total() is the
    /// number of rounds that came due and were run or coalesced.
    [[nodiscard]] std::uint64_t missed_total() const noexcept { return missed_total_; }

    /// Changes what it calls; allowed at any time, inside the callback too.
    /// @param callback what it calls from now on.
    void set_callback(timer_callback callback) noexcept { callback_ = callback; }
    /// Changes the adjust hook, from the next round on ({nullptr, nullptr}: none).
    /// @param adjust the hook.
    void set_adjust(repeat_adjust adjust) noexcept { adjust_ = adjust; }

    /// The wheel.
    [[nodiscard]] Wheel& wheel() const noexcept { return *wheel_; }

private:
    struct run_now_handler;
    // What the node stands for while pending: a round due at deadline_, or a placeholder that
    // keeps the timer's entry while a run_once_now() is posted.
    enum class role : std::uint8_t { round, hold };

    template <class Rep, class Period>
    static duration validated_period(std::chrono::duration<Rep, Period> period);

    duration next_delay() const noexcept;
    void start_fresh();
    void place_at(typename Wheel::tick_type tick);
    void place_round(duration deadline);
    void place_hold();
    void fire();
    void run_round(duration now, duration due);
    void after_callback(std::uint64_t generation, bool wheel_destroyed) noexcept;

    Wheel* wheel_;
    timer_callback callback_;
    repeat_adjust adjust_;
    duration period_;
    duration deadline_{};  // the round's, as the wheel's elapsed time (role::round)
    repeat_mode mode_;
    role role_ = role::round;
    bool run_now_posted_ = false;
    bool in_round_ = false;  // running, with the node out of the wheel: a round the wheel ran is in progress
    int callbacks_running_ = 0;  // > 0 inside the callback
    // Bumped by every operation that decides the next round (start, stop, restart, reset,
    // run_once_now): the callback's return and a posted run act only if it did not change.
    std::uint64_t generation_ = 0;
    std::uint64_t runs_ = 0;
    std::uint64_t missed_ = 0;
    std::uint64_t missed_total_ = 0;
    bool* destroyed_ = nullptr;                     // set while the callback runs (folly's DestructorCheck)
    std::shared_ptr<basic_repeating_timer*> life_;  // run_once_now() handlers hold a weak_ptr to it
    timer_node node_{bind_member<&basic_repeating_timer::fire>(this)};
};

/// The repeating timer on idlewheel::wheel_timer.
using repeating_timer = basic_repeating_timer<wheel_timer>;

}  // namespace idlewheel

#include <idlewheel/impl/repeating_timer.hpp>

#endif
