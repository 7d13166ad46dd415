// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_WHEEL_TIMER_HPP
#define IDLEWHEEL_WHEEL_TIMER_HPP

/** @file
 * @brief idlewheel::wheel_timer: many timeouts, one Asio timer.
 */

#include <idlewheel/core/activity_epochs.hpp>
#include <idlewheel/core/duration_math.hpp>
#include <idlewheel/detail/executor_check.hpp>
#include <idlewheel/detail/wait_op.hpp>
#include <idlewheel/core/wheel_core.hpp>
#include <idlewheel/error.hpp>
#include <idlewheel/timeout.hpp>
#include <idlewheel/timer_node.hpp>

#include <idlewheel/detail/asio.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace idlewheel {

/// Where the delay of schedule() / async_wait() starts (see the top of this header).
enum class clock_read {
    per_schedule,  ///< at the call: one clock read per call; at most one tick late
    per_tick,      ///< at the next wake-up: no clock read per call; at most two ticks late
};

/// Construction options of a wheel_timer.
struct wheel_options {
    /// The wheel's resolution. Timeouts fire at most one tick late (two with
    /// clock_read::per_tick). Must be > 0 (and not round
    /// to 0 in the clock's duration). The default, 10 ms, suits idle and heartbeat timeouts of
    /// a second or more (1 % precision or better) while letting one wake-up serve every
    /// session due in the same 10 ms; use 1 ms for sub-100 ms operation deadlines.
    std::chrono::nanoseconds tick = std::chrono::milliseconds(10);

    /// Most timeouts pending at once; 0 means unlimited. Past it, schedule() throws and
    /// async_wait() completes with error::too_many_pending (Netty's maxPendingTimeouts).
    /// Moving an entry that is pending never counts. A running liveness object (idle_watch,
    /// heartbeat, ...) re-arming its own entry after it fired never counts either, so a full
    /// wheel cannot silently end it: pending() may then exceed max_pending by at most the
    /// number of such objects.
    std::size_t max_pending = 0;

    /// Most callbacks run by one wake-up before the wheel yields to other handlers (Netty
    /// moves at most 100 000 timeouts a tick). Must be > 0. 4096 callbacks of a few
    /// microseconds keep I/O waiting well under 50 ms even when thousands of sessions idle out
    /// together.
    std::size_t max_run_per_wakeup = 4096;

    /// Where relative delays start: at the call (exact, one clock read each), or at the next
    /// wake-up (no clock read, up to one more tick late). Servers that arm an operation
    /// deadline per request and cancel it when the request completes want per_tick.
    clock_read clock = clock_read::per_schedule;
};

/// Counters of a wheel_timer (stats()). All since construction.
struct wheel_stats {
    std::size_t pending = 0;        ///< scheduled and not yet run (pending())
    std::uint64_t scheduled = 0;    ///< entries put in the wheel (reschedules included)
    std::uint64_t rescheduled = 0;  ///< of those, moves of an entry that was still pending
    std::uint64_t expired = 0;      ///< callbacks run / waits completed because due (or expire_all)
    std::uint64_t cancelled = 0;    ///< removed before running (cancel, destroyed node, cancellation slot)
    std::uint64_t stopped = 0;      ///< dropped unrun by stop() or by the wheel's destruction
    std::uint64_t rejected = 0;     ///< refused: max_pending reached, or stopped
    std::uint64_t wakeups = 0;      ///< times the wheel ran: its Asio timer completed, or its posted continuation
    std::uint64_t idle_wakeups =
        0;  ///< of those, wake-ups that ran no callback (a cascade, closing an activity epoch, giving staged entries their deadlines, or everything cancelled)
    std::uint64_t ticks_advanced = 0;  ///< ticks the wheel's time moved forward over all wake-ups
    std::chrono::nanoseconds worst_lateness{
        0};  ///< largest (wake-up time - start of the deadline tick) of a callback it ran

    /// Expiry lateness histogram (wake-up time - start of the deadline tick, per callback run
    /// because due): lateness_count[i] counts lateness in (lateness_bounds[i-1],
    /// lateness_bounds[i]], the last element lateness above every bound. Fixed buckets,
    /// counted without allocating; cumulate them for a Prometheus histogram.
    static constexpr std::array<std::chrono::microseconds, 12> lateness_bounds{
        std::chrono::microseconds(100),    std::chrono::microseconds(250),    std::chrono::microseconds(500),
        std::chrono::microseconds(1000),   std::chrono::microseconds(2500),   std::chrono::microseconds(5000),
        std::chrono::microseconds(10000),  std::chrono::microseconds(25000),  std::chrono::microseconds(50000),
        std::chrono::microseconds(100000), std::chrono::microseconds(250000), std::chrono::microseconds(1000000)};
    /// The histogram's buckets (see lateness_bounds).
    std::array<std::uint64_t, lateness_bounds.size() + 1> lateness_count{};
    std::chrono::nanoseconds lateness_sum{0};  ///< sum of the lateness of every callback counted above

    /// Adds another wheel's figures (a wheel_pool's sum): pending and every counter add, the
    /// lateness histogram adds bucket by bucket, worst_lateness takes the larger.
    /// @param o the figures added.
    /// @return *this.
    wheel_stats& operator+=(const wheel_stats& o) noexcept {
        pending += o.pending;
        scheduled += o.scheduled;
        rescheduled += o.rescheduled;
        expired += o.expired;
        cancelled += o.cancelled;
        stopped += o.stopped;
        rejected += o.rejected;
        wakeups += o.wakeups;
        idle_wakeups += o.idle_wakeups;
        ticks_advanced += o.ticks_advanced;
        if (o.worst_lateness > worst_lateness) worst_lateness = o.worst_lateness;
        for (std::size_t i = 0; i < lateness_count.size(); ++i) lateness_count[i] += o.lateness_count[i];
        lateness_sum += o.lateness_sum;
        return *this;
    }
};

namespace detail {
template <class Wheel>
struct liveness_access;
template <class Wheel>
struct entry_access;
}  // namespace detail

/**
 * Many timeouts, one Asio timer: a hierarchical timing wheel (idlewheel::wheel_timer is
 * `basic_wheel_timer<std::chrono::steady_clock>`).
 *
 * @tparam Clock a std::chrono clock (std::chrono::steady_clock; manual_clock in tests).
 * @tparam Executor the executor type of the wheel's Asio timer (default net::any_io_executor).
 *
 * @par Overview
 * A hierarchical timing wheel (core/wheel.hpp) driven by ONE asio::basic_waitable_timer on
 * the wheel's executor. Scheduling and cancelling are O(1) and never touch the system timer
 * unless the new timeout is the earliest (with clock_read::per_tick: at most once per tick, to
 * ask for the wake-up that starts the staged delays); the Asio timer is armed only for the
 * next tick that has something due, so an idle wheel never wakes up (Netty's HashedWheelTimer
 * wakes every tick, forever, on a thread of its own).
 *
 *     net::io_context io;
 *     idlewheel::wheel_timer wheel(io);                       // 10 ms ticks by default
 *     auto t = wheel.schedule(30s, [] { std::puts("30 s"); }); // handle: t.cancel()
 *     wheel.async_wait(100ms, [](error_code ec) { ... });
 *     co_await wheel.async_wait(1s, net::use_awaitable);       // in a C++20 coroutine
 *     io.run();
 *
 * The library needs C++17; only coroutines need C++20 (as for Asio). The examples in these
 * headers fill options with C++20's designated initializers ({.tick = 1ms}); in C++17 set the
 * members instead: `idlewheel::wheel_options o; o.tick = 1ms; idlewheel::wheel_timer wheel(io, o);`.
 *
 * @par Precision
 * Precision contract: time is counted in ticks of wheel_options::tick. A timeout never runs
 * before its deadline, and runs at most one tick (plus the io_context's scheduling delay)
 * after it: less than one tick for any positive delay, exactly one for a delay <= 0 made on
 * a tick boundary (the current tick has already been handed out). Timeouts due in the same
 * tick run in the order they entered the wheel (the order they were scheduled, but see
 * clock_read::per_tick below). Delays of any std::chrono type are rounded up and saturated,
 * never overflowed: odd periods (duration<int64_t, ratio<1, 3>>), floating-point reps, a delay
 * of years or duration::max() (a timeout that practically never fires), and NaN (never fires
 * either); zero, negative and -infinity mean "due now". Absolute times (schedule_at) are exact
 * at every point of the clock's range: a time that has passed, time_point::min() included, is
 * due now; time_point::max() never comes. "Due now" is the first tick that has not begun, for
 * a delay <= 0 and for schedule_at() of a time that has passed alike (schedule_at() reads the
 * clock for it), so timeouts due at the call and made in the same tick run in call order,
 * however long the wheel slept (schedule(0), then schedule_at(a past time): that order). With
 * clock_read::per_tick the relative ones enter the wheel at the next wake-up, after the
 * absolute ones (below). schedule_tick() takes its tick as given: a tick that has begun but
 * that a sleeping wheel has not handed out yet keeps its place in deadline order.
 *
 * @par Where a delay starts (wheel_options::clock_read)
 * By default every schedule() and async_wait() reads the clock, which is most of what they
 * cost (bench/README.md has the figures).
 * With clock_read::per_tick they read nothing: the delay starts at the next wake-up, which
 * the wheel asks for at the next tick boundary (at once if the wheel is asleep: behind the
 * clock, or never woken up yet, as a fresh wheel) and which reads the clock once for
 * everything scheduled since. The contract then
 * becomes: never before its delay has passed since the call, at most two ticks (plus the
 * io_context's scheduling delay) after. Timeouts scheduled and cancelled within one tick,
 * the common case of operation deadlines, never enter the wheel at all. schedule_at() and
 * schedule_tick() take absolute times and are exact either way. Order within a tick: an
 * absolute entry enters the wheel at the call, a relative one of a per_tick wheel at the
 * wake-up that starts its delay, so a relative timeout due in the same tick as an absolute
 * one runs after it even if it was scheduled first.
 *
 * @par Thread safety
 * A wheel belongs to one executor (an io_context run by one thread, or a strand).
 * Every member function, and every handle or node of it, must be used there, or outside any
 * handler (setting up before run(), tearing down after it returned). Scale across cores with
 * one io_context and one wheel per thread, or, for one io_context run by N threads, with an
 * idlewheel::wheel_pool (wheel_pool.hpp: a wheel per strand). With IDLEWHEEL_CHECK_EXECUTOR on
 * (the default without NDEBUG) a call from a handler that is not on the wheel's executor
 * aborts with a message, including a wheel on an io_context's own executor called from two
 * threads (detail/executor_check.hpp says exactly what is checked); release builds do not check.
 *
 * @par Completion
 * Callbacks (schedule() and timer_node) run on the wheel's executor, from the wheel's own
 * completion handler, at most wheel_options::max_run_per_wakeup of them per wake-up; then
 * the wheel posts its continuation so I/O handlers get their turn. A continuation finishes
 * the batch of the wake-up that posted it: like a wake-up it reads the clock, runs what came
 * due, starts staged delays and closes the activity epoch (stats().wakeups counts it), but it
 * is not "the next wake-up" of the switch (set_expire_immediately()). A callback may schedule,
 * cancel or reschedule anything, and may destroy the wheel. If a callback throws, the
 * exception leaves io_context::run() like any handler's; entries not yet run are neither lost
 * nor run twice: the wheel has already posted its continuation, and the next run() goes on.
 * async_wait() handlers are Asio handlers: the wake-up that finds a wait due posts its
 * completion (as an Asio timer's completion is queued), so the handler runs after that
 * wake-up's callbacks, as a handler of its own, and an exception it throws leaves run() on its
 * own: one exception per run() call, none lost, none merged with another. A wait handler never
 * runs inside a wheel call: not inside the wake-up, a callback, expire_all() or stop().
 */
template <class Clock, class Executor = net::any_io_executor>
class basic_wheel_timer final : private detail::wheel_core {
public:
    using clock_type = Clock;                      ///< The clock the wheel reads.
    using duration = typename Clock::duration;     ///< The clock's duration.
    using time_point = typename Clock::time_point; ///< The clock's time point.
    using executor_type = Executor;                ///< The executor every call and callback belongs to.
    using tick_type = detail::wheel::tick_type;    ///< A tick number (std::uint64_t, ticks since the origin).

    /// Binds the wheel to `ex`. Throws std::invalid_argument for invalid options.
    /// @param ex the executor the wheel, its callbacks and its calls belong to.
    /// @param options tick, max_pending, max_run_per_wakeup, clock (wheel_options).
    /// @throws std::invalid_argument if options.tick is not > 0 in the clock's duration, or
    /// options.max_run_per_wakeup is 0.
    explicit basic_wheel_timer(const executor_type& ex, const wheel_options& options = {});

    /// Binds the wheel to `ctx.get_executor()`.
    /// @param ctx an execution context (an io_context) whose executor converts to executor_type.
    /// @param options as for the other constructor.
    /// @throws std::invalid_argument for invalid options.
    template <class ExecutionContext,
              std::enable_if_t<std::is_convertible_v<ExecutionContext&, net::execution_context&>, int> = 0>
    explicit basic_wheel_timer(ExecutionContext& ctx, const wheel_options& options = {})
        : basic_wheel_timer(executor_type(ctx.get_executor()), options) {}

    basic_wheel_timer(const basic_wheel_timer&) = delete;             ///< Not copyable (nor movable).
    basic_wheel_timer& operator=(const basic_wheel_timer&) = delete;  ///< Not copyable (nor movable).

    /// Drops every pending timeout unrun, as stop() does (handles see cancelled(), pending
    /// async waits complete with operation_aborted; a wait whose completion was already posted
    /// keeps its success). Allowed inside a callback.
    ~basic_wheel_timer();

    /// The executor the wheel belongs to (its callbacks run there, every call is made there).
    [[nodiscard]] executor_type get_executor() const noexcept { return timer_.get_executor(); }

    /// Runs `fn()` once, on the executor, after `delay` (Netty's newTimeout). The callable is
    /// moved into one allocation with the wheel's entry; it is destroyed right after it runs or
    /// when the timeout is cancelled.
    /// `fn` must be callable with no arguments (a static_assert says so otherwise).
    /// @param delay any std::chrono duration, rounded up to ticks and saturated (the precision
    /// contract above); zero, negative and -infinity mean due now, NaN never.
    /// @param fn the callback, moved in; it runs on the wheel's executor from the wheel's own
    /// completion handler (see Completion above), and may throw (the exception leaves run()).
    /// @return the handle: timeout::cancel() unschedules it; dropping the handle does not.
    /// @throws system_error error::too_many_pending, error::stopped.
    template <class Rep, class Period, class F>
    timeout schedule(std::chrono::duration<Rep, Period> delay, F&& fn);

    /// Schedules (or re-schedules, if pending) an intrusive node to fire after `delay`.
    /// No allocation; O(1). Rescheduling a pending node never counts against max_pending.
    /// A node pending on another wheel is taken out of that one.
    /// @param node the node; its timer_callback runs when it fires. Must outlive its scheduling
    /// (destroying a node unschedules it).
    /// @param delay as for schedule(delay, fn).
    /// @throws system_error error::too_many_pending, error::stopped (the node is then left as
    /// it was).
    template <class Rep, class Period>
    void schedule(timer_node& node, std::chrono::duration<Rep, Period> delay);

    /// Schedules `node` for an absolute point of this wheel's clock (exact, whatever
    /// clock_read: the first tick starting at or after `when`; a time that has passed is due
    /// now, time_point::max() never comes).
    /// @param node the node (re-scheduled if pending).
    /// @param when the time point.
    /// @throws system_error error::too_many_pending, error::stopped.
    void schedule_at(timer_node& node, time_point when);

    /// Starts an asynchronous wait of `delay` on the wheel.
    ///
    /// Completion signature: void(error_code). The handler is called exactly
    /// once, and never from inside this function (immediate errors complete as if by post):
    ///  - success: the delay elapsed (or expire_all() or the switch ran it ahead of time);
    ///  - net::error::operation_aborted: cancelled through the handler's cancellation
    ///    slot, or dropped by stop() / the wheel's destruction, while still pending;
    ///  - error::stopped: the wheel was already stopped;
    ///  - error::too_many_pending: max_pending was reached.
    /// Per-operation cancellation: terminal, partial and total (a wait has no side effects).
    /// The handler's associated executor (default: the wheel's) runs it, with outstanding work
    /// on it while the wait is pending; its associated allocator allocates the operation.
    /// Once due, a wait is complete: the wake-up posts its completion (the handler runs later,
    /// never inside a wheel call, expire_all() included), and from then on it is no longer
    /// pending: it counts neither in pending() nor toward max_pending, and cancelling it,
    /// stop() or destroying the wheel leave it a success, as an Asio timer's queued
    /// completion.
    /// Works with any completion token: callbacks, use_awaitable, deferred, use_future.
    /// (Asio 1.81 has no default completion token for any_io_executor: pass one.)
    /// @param delay as for schedule(delay, fn).
    /// @param token the completion token, for the signature void(error_code).
    /// @return what the token's async_result makes of it (nothing for a callback).
    template <class Rep, class Period, class Token>
    auto async_wait(std::chrono::duration<Rep, Period> delay, Token&& token);

    /// When a pending timeout is due (Asio's expiry(), Kafka's getDelay()): the start of its
    /// deadline tick, the time from which the wheel runs it (at its first wake-up at or after
    /// it). Against the precision contract: never before the time asked for (the call's time
    /// + the delay, or schedule_at()'s time), and less than one tick after it, except a delay
    /// <= 0 or a time that had passed, which are due at the next tick boundary. With
    /// clock_read::per_tick, an entry whose delay has not started yet (staged until the next
    /// wake-up) reports the earliest it can be due: as if its delay started now (it reads the
    /// clock); it may then be due up to one tick later than that. While the switch is on
    /// (set_expire_immediately()) an entry keeps its expiry but runs at the next tick's
    /// wake-up. Not pending (never scheduled, run or running, cancelled, dropped by stop(), an
    /// empty handle, or an entry of another wheel): time_point::max(), which never comes.
    /// @param t the handle.
    /// @return the start of its deadline tick, or time_point::max().
    [[nodiscard]] time_point expiry(const timeout& t) const noexcept {
        return t.entry_ != nullptr ? expiry_of(*t.entry_) : time_point::max();
    }
    /// When a pending node is due: as expiry(const timeout&).
    /// @param node the node.
    /// @return the start of its deadline tick, or time_point::max() if not pending here.
    [[nodiscard]] time_point expiry(const timer_node& node) const noexcept { return expiry_of(node); }

    /// Number of timeouts scheduled and not yet run (handles, nodes and waits; not a wait
    /// whose completion has been posted).
    [[nodiscard]] std::size_t pending() const noexcept { return wheel_core::pending(); }

    /// Stops the wheel: nothing pending will run, and scheduling fails with error::stopped
    /// from now on. Returns the handles of the schedule() timeouts that never ran (Netty's
    /// stop(), in no particular order); they report cancelled(). Pending nodes are unscheduled;
    /// pending waits complete with operation_aborted (a wait whose completion was already
    /// posted keeps its success). The Asio timer is cancelled. Idempotent.
    std::vector<timeout> stop();

    /// Runs everything pending now, ahead of time, in deadline-tick order (schedule order
    /// within a tick): callbacks run, nodes
    /// fire, waits complete with success (their handlers are posted: they run after
    /// expire_all() returns, never inside it). For draining on shutdown. Returns how many ran
    /// (completed waits included).
    /// Inside a callback it only queues them behind the current batch (they run before the
    /// wheel sleeps again) and returns how many were queued. If a callback throws, the rest
    /// stay queued and run on the next io_context::run(), none lost or run twice.
    std::size_t expire_all();

    /// The switch (the customized HashedWheelTimer's openSwitch() / closeSwitch()). While on,
    /// every wake-up runs everything pending, ahead of its deadline, and the wheel wakes at
    /// every tick while anything is pending: a timeout scheduled while it is on (handles,
    /// nodes, waits, repeating timers, the checks of liveness objects) runs at the wheel's next
    /// wake-up (at the latest the next tick boundary; at once if the wheel is behind the clock)
    /// instead of after its delay, never inline in the call that scheduled it, and never in
    /// the batch of the callback that scheduled it. Waits
    /// complete with success. Each pending entry runs at most once per tick, and the wheel
    /// sleeps between ticks, whatever max_run_per_wakeup and the number of liveness objects:
    /// a wake-up takes everything pending into its batch; the continuations it posts when the
    /// batch exceeds max_run_per_wakeup only finish that batch (they are not "the next
    /// wake-up"), so what its callbacks schedule runs at the next tick's wake-up. Liveness
    /// objects are then looked at every tick, and still decide by the real time: an idle watch
    /// never reports early. Each wake-up looks at the switch when it comes: turning it off
    /// before the wake-up that would have run them leaves every entry at its own deadline,
    /// those scheduled while it was on included (they wait for their delays). expire_all() is
    /// the one-shot drain; this is a mode. Default: off.
    /// @param on true turns the switch on, false off.
    void set_expire_immediately(bool on);
    /// Whether the switch (set_expire_immediately()) is on.
    [[nodiscard]] bool expire_immediately() const noexcept { return expire_immediately_; }

    /// The wheel's counters since construction (wheel_stats). Reads no clock. Like every
    /// member, call it on the wheel's executor (this one is not checked by the executor check).
    [[nodiscard]] wheel_stats stats() const noexcept;

    /// The tick length in use.
    [[nodiscard]] duration tick() const noexcept { return tick_; }

    /// The deadline tick a delay starting now maps to (round up: never early). For tests and
    /// for code (idle_watch) that stores deadlines in ticks.
    /// @param delay any std::chrono duration (rounded up, saturated).
    /// @return the deadline tick.
    template <class Rep, class Period>
    [[nodiscard]] tick_type deadline_after(std::chrono::duration<Rep, Period> delay) const noexcept;

    /// The tick that contains Clock::now().
    [[nodiscard]] tick_type current_tick() const noexcept;

    /// The time at which `tick` begins (saturating at time_point::max()).
    /// @param tick a tick number.
    /// @return the time point.
    [[nodiscard]] time_point time_of(tick_type tick) const noexcept;

    /// Schedules `node` for the start of tick `deadline` (see deadline_after()), taken as given
    /// (a tick that has begun but that a sleeping wheel has not handed out keeps its place).
    /// @param node the node (re-scheduled if pending).
    /// @param deadline the tick.
    /// @throws system_error error::too_many_pending, error::stopped.
    void schedule_tick(timer_node& node, tick_type deadline);

    /// Clock::now() as time elapsed since the wheel's origin (the time tick 0 starts). Reads
    /// the clock.
    [[nodiscard]] duration elapsed_now() const noexcept { return Clock::now() - origin_; }

    /// The time the wheel last woke up at, as elapsed time: exact inside a callback the wheel
    /// runs (no clock read needed there).
    [[nodiscard]] duration wake_elapsed() const noexcept { return wake_elapsed_; }

    /// The first tick that starts at or after elapsed time `e` (round up: never early).
    /// @param e time elapsed since the wheel's origin.
    /// @return the tick.
    [[nodiscard]] tick_type tick_at_or_after(duration e) const noexcept;

private:
    template <class>
    friend struct detail::liveness_access;  // the liveness layer's narrow view (detail/liveness_access.hpp)
    template <class>
    friend struct detail::entry_access;  // cancel_after's shared entries (detail/entry_access.hpp)

    using asio_timer = net::basic_waitable_timer<Clock, net::wait_traits<Clock>, Executor>;
    struct wake_handler;
    struct continue_handler;
    struct initiate_async_wait;

    void became_empty() noexcept override;
    void disarm() noexcept;
    void wake_next_tick() noexcept override;
    void schedule_tick_for(timer_node& node, tick_type deadline, std::size_t max_pending) {
        schedule_entry(node, deadline, max_pending);  // a friend of timer_node: may see its entry
    }
    void schedule_tick_for(detail::shared_entry& e, tick_type deadline, std::size_t max_pending) {
        schedule_entry(e, deadline, max_pending);
    }
    void schedule_entry(detail::timer_entry& e, tick_type deadline, std::size_t max_pending);
    [[nodiscard]] time_point expiry_of(const detail::timer_entry& e) const noexcept;
    bool insert_after(detail::timer_entry& e, duration delay);
    void flush_staged_at(duration start) noexcept;
    void prepare_insert() noexcept;
    void arm(tick_type due);
    void on_wake(bool continuation);
    void run_and_rearm_after();
    void check_executor() const noexcept;
    void check_caller() const noexcept override { check_executor(); }

    duration tick_;
    time_point origin_;
    std::size_t max_pending_;
    std::size_t max_run_per_wakeup_;
    bool per_tick_;                             // wheel_options::clock == clock_read::per_tick
    mutable asio_timer timer_;                  // mutable: Asio 1.81's get_executor() is not const
    std::shared_ptr<basic_wheel_timer*> life_;  // handlers hold a weak_ptr to it
    bool armed_ = false;
    bool continuation_posted_ = false;
    bool running_ = false;
    bool expire_immediately_ = false;
    tick_type armed_tick_ = 0;
    std::uint64_t generation_ = 0;
    std::chrono::nanoseconds worst_lateness_{0};
    std::array<std::uint64_t, wheel_stats::lateness_bounds.size() + 1> lateness_count_{};
    std::chrono::nanoseconds lateness_sum_{0};
    duration wake_elapsed_{};
    duration last_wake_ = duration::min() / 2;  // the previous wake-up's time (see on_wake)
    detail::activity_epochs epochs_;            // closed at wake-ups; used by the liveness layer only
    mutable detail::owner_thread owner_;        // the executor check's (detail/executor_check.hpp)
};

/// The wheel timer on std::chrono::steady_clock.
using wheel_timer = basic_wheel_timer<std::chrono::steady_clock>;

}  // namespace idlewheel

#include <idlewheel/impl/wheel_timer.hpp>

#endif
