// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// Before the wheel: the workaround must be declared before wait_op is instantiated.

#include <idlewheel/wheel_timer.hpp>

// libFuzzer target: basic_wheel_timer<manual_clock> driven by io_context::poll() only, with
// every way of scheduling (schedule() handles, timer_node, schedule_at, async_wait), delays of
// many chrono types and their extremes, absolute times at the limits of the clock, full wheels,
// throwing callbacks and wait handlers, stop(), expire_all() and the expire_immediately switch,
// checked against a model (input format: wheel_timer_input.hpp).
//
// The model keeps one record per timeout, with its exact due time in nanoseconds of the clock
// (__int128, computed here from the count and the period of the delay's own type: integers
// exactly, floating-point values from their mantissa and exponent; never through the library's
// conversion) and checks:
//  - never early: a callback or a successful wait runs at a time >= its due time (a due time
//    past time_point::max() never comes), unless expire_all() or the switch ran it ahead;
//  - never late: the driver polls at every tick boundary (except in the "jump" advances, which
//    model a late io_context); a timeout still pending after a poll at its late bound is a
//    missed one: due + 1 tick, due + 2 ticks with clock_read::per_tick (whose delay starts at
//    the next wake-up, so a jump also pushes that bound by its length), max(when, now) + 1 tick
//    for schedule_at;
//  - exactly once: a callback never runs twice, never after cancel / stop / a reschedule, never
//    inline inside a call of the harness or of another callback; a wait handler is called
//    exactly once, with success, operation_aborted (only after a cancellation or stop), or the
//    error the model predicts at the call (stopped, too_many_pending);
//  - max_pending: a schedule is refused exactly when the model's pending count (handles, nodes,
//    waits; a move of a pending node never counts) is at max_pending. Inside a callback, waits
//    completed by the same wake-up are in flight, so there the count is a range;
//  - exceptions: every exception a callback or wait handler throws leaves poll() (or the
//    expire_all() of the harness) exactly once, as itself: none lost, none doubled, none
//    merged into a multiple_exceptions;
//  - the switch: while it is on, a poll at a tick boundary leaves nothing pending that was
//    scheduled before that boundary;
//  - after every operation: pending() and the state of every handle and node match the model;
//    stop() returns exactly the pending handles.
//
// manual_clock::reset() at every input keeps a run deterministic. IDLEWHEEL_FUZZ_TRACE=1 prints
// every operation.

#include "fuzz_input.hpp"
#include "support/manual_io.hpp"
#include "wheel_timer_input.hpp"

#include <idlewheel/error.hpp>
#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// Two findings of this target, fixed in the library and checked strictly here (README.md,
// "What it found"): a floating-point delay converted through long double could run 1 ns
// early (now exact), and wheel_stats::lateness_sum overflowed once the lateness of the
// callbacks run added up to 2^63 ns (now saturating). The clock may jump up to 2^62 ns at once.
constexpr __int128 float_rounding_slack = 0;
constexpr int max_jump_log2 = 62;

namespace {

using namespace idlewheel::fuzz;
using namespace idlewheel::fuzz::wt;
using idlewheel::manual_clock;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
namespace net = idlewheel::net;
__extension__ typedef __int128 i128;  // __extension__: no -Wpedantic warning

constexpr i128 ns_max = std::numeric_limits<std::int64_t>::max();
constexpr i128 ns_min = std::numeric_limits<std::int64_t>::min();
constexpr i128 never = ns_max * 4;  // a time the clock never reaches

std::string show(i128 v) {
    if (v >= never) return "never";
    if (v == 0) return "0";
    const bool negative = v < 0;
    std::string s;
    unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
    while (u != 0) {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
        u /= 10;
    }
    return negative ? "-" + s : s;
}

// ---- delays: the typed value, and the model's exact conversion ----

struct delay_spec {
    unsigned type = 0;
    i128 icount = 0;    // the count, for integer reps
    double fcount = 0;  // the count, for floating-point reps
};

template <std::size_t I>
using delay_type = std::tuple_element_t<I, delay_types>;

template <class D>
D make_delay(const delay_spec& s) {
    using rep = typename D::rep;
    if constexpr (std::is_floating_point_v<rep>)
        return D(static_cast<rep>(s.fcount));
    else
        return D(static_cast<rep>(s.icount));
}

template <class F>
void visit_delay(const delay_spec& s, F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((s.type == I ? (f(make_delay<delay_type<I>>(s)), 0) : 0), ...);
    }
    (std::make_index_sequence<delay_type_count>{});
}

// ceil(p / q) for p >= 0, q > 0.
i128 ceil_div(i128 p, i128 q) { return p / q + (p % q != 0 ? 1 : 0); }

// The delay in nanoseconds, rounded up and saturated at nanoseconds::max() (the documented
// rule: <= 0 and -inf are 0; +inf, NaN and anything too large are max).
template <class D>
i128 exact_ns(D d) {
    using ratio = std::ratio_divide<typename D::period, std::nano>;
    const i128 num = ratio::num, den = ratio::den;
    if constexpr (std::is_floating_point_v<typename D::rep>) {
        const double v = static_cast<double>(d.count());  // float -> double is exact
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) return ns_max;
        if (!(v > 0)) return 0;
        // v = m * 2^e exactly, m an integer of at most 53 bits.
        int e = 0;
        const double fraction = std::frexp(v, &e);
        const auto m = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
        e -= 53;
        const i128 p = static_cast<i128>(m) * num;  // < 2^53 * 2^56
        i128 q = 0;
        if (e >= 0) {
            if (e > 16) return ns_max;  // p >= 2^52 * 2^17 > 2^63
            q = ceil_div(p << e, den);
        } else if (-e > 110) {
            q = 1;  // p / (den * 2^-e) < 2^109 / 2^110: a positive fraction of a nanosecond
        } else {
            q = ceil_div(p, den << (-e));
        }
        return std::min(q, ns_max);
    } else {
        const i128 c = d.count();
        if (c <= 0) return 0;
        return std::min(ceil_div(c * num, den), ns_max);
    }
}

i128 exact_ns(const delay_spec& s) {
    i128 r = 0;
    visit_delay(s, [&r](auto d) { r = exact_ns(d); });
    return r;
}

bool is_floating(const delay_spec& s) {
    bool r = false;
    visit_delay(s, [&r](auto d) { r = std::is_floating_point_v<typename decltype(d)::rep>; });
    return r;
}

std::string describe(const delay_spec& s) {
    std::ostringstream os;
    os << "type " << s.type << " count ";
    if (is_floating(s))
        os << std::hexfloat << s.fcount << std::defaultfloat << " (" << s.fcount << ")";
    else
        os << show(s.icount);
    os << " = " << show(exact_ns(s)) << " ns";
    return os.str();
}

template <class D>
delay_spec decode_count(fuzz_input& in, unsigned type, ns tick) {
    using rep = typename D::rep;
    using lim = std::numeric_limits<rep>;
    using ratio = std::ratio_divide<typename D::period, std::nano>;
    delay_spec s;
    s.type = type;
    const std::uint8_t shape = in.byte();
    const unsigned v = shape & 63U;
    const auto set_integer = [&s](long double c) {
        c = std::max(c, static_cast<long double>(lim::lowest()));
        c = std::min(c, static_cast<long double>(lim::max()));
        s.icount = static_cast<i128>(static_cast<rep>(c));
    };
    switch (shape >> 6) {
        case 0:
        case 1: {
            const unsigned quarters = v + ((shape >> 6) != 0 ? 64U : 0U);  // 0 to 32 ticks
            const long double target = static_cast<long double>(tick.count()) * quarters / 4;
            const long double unit = static_cast<long double>(ratio::num) / static_cast<long double>(ratio::den);
            const long double c = target / unit;
            const unsigned mode = in.byte() % 4;
            if constexpr (std::is_floating_point_v<rep>) {
                auto f = static_cast<rep>(c);
                if (mode == 1) f = std::nextafter(f, lim::infinity());
                if (mode == 2) f = std::nextafter(f, -lim::infinity());
                if (mode == 3) f = f * static_cast<rep>(1.5);
                s.fcount = static_cast<double>(f);
            } else {
                const long double floor = std::floor(c);
                set_integer(mode == 0 ? floor : mode == 1 ? std::ceil(c) : mode == 2 ? floor - 1 : floor + 1);
            }
            break;
        }
        case 2: {
            const long double ns_max_units = static_cast<long double>(ns_max) * static_cast<long double>(ratio::den) /
                                             static_cast<long double>(ratio::num);
            const unsigned which = v % extreme_count;
            if constexpr (std::is_floating_point_v<rep>) {
                constexpr std::array<double, extreme_count> table{std::numeric_limits<double>::quiet_NaN(),
                                                                  std::numeric_limits<double>::infinity(),
                                                                  -std::numeric_limits<double>::infinity(),
                                                                  1e300,
                                                                  -1e300,
                                                                  0.0,
                                                                  -0.0,
                                                                  1.0,
                                                                  1e-300,
                                                                  std::numeric_limits<double>::denorm_min(),
                                                                  0,
                                                                  0,
                                                                  0,
                                                                  0};
                if (which < 10) {
                    s.fcount = static_cast<double>(static_cast<rep>(table[which]));
                } else if (which == 10) {
                    s.fcount = static_cast<double>(static_cast<rep>(ns_max_units));  // 2^63 ns
                } else if (which == 11) {
                    s.fcount = static_cast<double>(std::nextafter(static_cast<rep>(ns_max_units), rep(0)));
                } else if (which == 12) {
                    s.fcount = static_cast<double>(lim::max());
                } else {
                    s.fcount = static_cast<double>(lim::lowest());
                }
            } else {
                switch (which) {
                    case 0: set_integer(static_cast<long double>(lim::max())); break;
                    case 1: set_integer(static_cast<long double>(lim::min())); break;
                    case 2: set_integer(0); break;
                    case 3: set_integer(-1); break;
                    case 4: set_integer(1); break;
                    case 5: set_integer(static_cast<long double>(lim::max()) - 1); break;
                    case 6: set_integer(static_cast<long double>(lim::min()) + 1); break;
                    case 7: set_integer(std::floor(ns_max_units)); break;      // just below 2^63 ns
                    case 8: set_integer(std::floor(ns_max_units) + 1); break;  // just above
                    case 9: set_integer(std::floor(ns_max_units / 2)); break;
                    case 10: set_integer(static_cast<long double>(lim::max()) / 2); break;
                    case 11: set_integer(2); break;
                    case 12: set_integer(1000); break;
                    default: set_integer(-static_cast<long double>(lim::max()) / 2); break;
                }
            }
            break;
        }
        default: {
            const std::uint64_t raw = in.u64();
            if constexpr (std::is_same_v<rep, double>) {
                s.fcount = std::bit_cast<double>(raw);
            } else if constexpr (std::is_same_v<rep, float>) {
                s.fcount = static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(raw)));
            } else {
                s.icount = static_cast<i128>(static_cast<rep>(raw));  // modulo 2^bits
            }
            break;
        }
    }
    return s;
}

delay_spec decode_delay(fuzz_input& in, ns tick) {
    const unsigned type = in.byte() % delay_type_count;
    delay_spec s;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((type == I ? (s = decode_count<delay_type<I>>(in, type, tick), 0) : 0), ...);
    }
    (std::make_index_sequence<delay_type_count>{});
    return s;
}

// ---- the model ----

enum class kind : std::uint8_t { handle, node, wait };
enum class state : std::uint8_t { pending, ran, cancelled, stopped, superseded, refused };

constexpr std::array<const char*, 3> kind_names{"handle", "node", "wait"};
constexpr std::array<const char*, 6> state_names{"pending", "ran", "cancelled", "stopped", "superseded", "refused"};

struct plan {
    behaviour what = behaviour::none;
    unsigned operand = 0;
    delay_spec child;
};

struct record {
    kind k = kind::handle;
    state st = state::pending;
    i128 sched = 0;         // clock time of the call (ns since the clock's epoch)
    i128 due = 0;           // never before this; >= never: never
    i128 late = 0;          // must have run after a poll at or after this
    bool early_ok = false;  // expire_all() or the switch may run it ahead of time
    bool floating = false;  // a floating-point delay (float_rounding_slack)
    plan p;
    unsigned slot = 0;
    // waits
    bool cancel_emitted = false;
    bool stop_seen = false;
    bool handler_ran = false;
    int signal = -1;
    idlewheel::error_code refused_with;
    std::string what;  // how it was scheduled, for reports
};

struct fuzz_exception {
    std::uint64_t id;
};

class harness;

struct node_slot {
    harness* h = nullptr;
    unsigned index = 0;
    std::optional<idlewheel::timer_node> node;
    long id = -1;  // the record of its current schedule
};

// An operation, a report: kept for the failure message.
struct event {
    i128 at;
    std::string text;
};

class harness {
public:
    explicit harness(fuzz_input& in) : in_(in) {
        const std::uint8_t flags = in_.byte();
        options_.tick = ticks[in_.byte() % ticks.size()];
        options_.max_pending = max_pendings[in_.byte() % max_pendings.size()];
        options_.max_run_per_wakeup = run_bounds[in_.byte() % run_bounds.size()];
        options_.clock = (flags & 1U) != 0 ? idlewheel::clock_read::per_tick : idlewheel::clock_read::per_schedule;
        per_tick_ = (flags & 1U) != 0;
        tick_ = options_.tick.count();
        using tp = manual_clock::time_point;
        switch (static_cast<start>((flags >> 1) & 3U)) {
            case start::one_hour: manual_clock::reset(); break;
            case start::epoch: manual_clock::reset(tp{}); break;
            case start::near_max: manual_clock::reset(tp::max() - ns(std::int64_t{1} << 50)); break;
            case start::one_day: manual_clock::reset(tp{std::chrono::hours(24)}); break;
        }
        origin_ = now();
        wheel_.emplace(io_, options_);
        for (unsigned i = 0; i < slot_count; ++i) {
            nodes_[i].h = this;
            nodes_[i].index = i;
        }
        note("tick " + show(tick_) + " ns, max_pending " + std::to_string(options_.max_pending) +
             ", max_run_per_wakeup " + std::to_string(options_.max_run_per_wakeup) +
             (per_tick_ ? ", per_tick" : ", per_schedule") + ", origin " + show(origin_));
    }

    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;

    void run() {
        while (!in_.exhausted()) {
            step();
            poll_and_check();
        }
        // The end: destroying the wheel drops everything unrun; waits complete with
        // operation_aborted, and every handler has been called once.
        note("destroy the wheel");
        for (auto& r : records_) mark_stopped(r);
        {
            call_guard g(*this);
            wheel_.reset();
        }
        poll_all();
        for (std::size_t id = 0; id < records_.size(); ++id) {
            const record& r = records_[id];
            if (r.k == kind::wait && !r.handler_ran) fail("wait ", id, " (", r.what, ") never completed");
        }
    }

    // ---- what the wheel calls ----

    static void node_fired(void* context) {
        auto& s = *static_cast<node_slot*>(context);
        s.h->fired(static_cast<std::size_t>(s.id), kind::node);
    }

    void fired(std::size_t id, kind k) {
        const i128 t = now();
        if (id >= records_.size()) fail("a callback of an unknown timeout ran");
        record& r = records_[id];
        note("  runs: " + std::string(kind_names[static_cast<unsigned>(k)]) + " " + std::to_string(id));
        if (r.k != k) fail("timeout ", id, " ran as the wrong kind");
        if (in_call_ != 0)
            fail("timeout ", id, " (", r.what, ") ran inline, inside the call that scheduled or changed it");
        if (depth_ != 0) fail("timeout ", id, " (", r.what, ") ran inside another callback");
        if (r.st != state::pending)
            fail("timeout ", id, " (", r.what, ") ran, but it is ", state_names[static_cast<unsigned>(r.st)]);
        check_not_early(id, r, t);
        r.st = state::ran;
        const plan p = r.p;
        ++depth_;
        struct leave {
            int& depth;
            ~leave() { --depth; }
        } done{depth_};
        act(id, p);
    }

    void wait_done(std::size_t id, idlewheel::error_code ec) {
        const i128 t = now();
        record& r = records_[id];
        note("  wait " + std::to_string(id) + " completes: " + ec.message());
        if (r.handler_ran) fail("the handler of wait ", id, " was called twice");
        if (in_call_ != 0) fail("the handler of wait ", id, " ran inline, inside a call of the harness");
        if (depth_ != 0) fail("the handler of wait ", id, " ran inside a callback");
        r.handler_ran = true;
        if (r.signal >= 0 && signal_owner_[static_cast<unsigned>(r.signal)] == static_cast<long>(id))
            signal_owner_[static_cast<unsigned>(r.signal)] = -1;
        if (r.st == state::refused) {
            if (ec != r.refused_with)
                fail("wait ", id, " was refused with ", r.refused_with.message(), ", completed with ", ec.message());
        } else if (!ec) {
            if (r.st != state::pending)
                fail("wait ", id, " (", r.what, ") succeeded, but it is ", state_names[static_cast<unsigned>(r.st)]);
            check_not_early(id, r, t);
            r.st = state::ran;
        } else if (ec == net::error::operation_aborted) {
            if (!r.cancel_emitted && !r.stop_seen)
                fail("wait ", id, " (", r.what, ") aborted, but it was never cancelled or stopped");
            r.st = state::cancelled;
        } else {
            fail("wait ", id, " completed with an unexpected error: ", ec.message());
        }
        const plan p = r.p;
        if (r.st == state::refused || p.what == behaviour::none) return;
        if (!wheel_ && p.what != behaviour::throws) return;  // completed by the wheel's destruction
        ++depth_;
        struct leave {
            int& depth;
            ~leave() { --depth; }
        } done{depth_};
        if (p.what == behaviour::throws)
            throw_for(id);
        else if (p.what == behaviour::spawn)
            spawn(p.child, "spawned by wait " + std::to_string(id));
    }

private:
    struct call_guard {
        harness& h;
        explicit call_guard(harness& x) : h(x) { ++h.in_call_; }
        ~call_guard() { --h.in_call_; }
    };

    struct wait_handler {
        harness* h;
        std::size_t id;
        void operator()(idlewheel::error_code ec) const { h->wait_done(id, ec); }
    };

    [[nodiscard]] static i128 now() noexcept { return manual_clock::now().time_since_epoch().count(); }
    [[nodiscard]] i128 clock_cap() const noexcept { return ns_max - 16 * i128{1'000'000'000}; }

    void note(std::string text) {
        if (trace_enabled()) std::fprintf(stderr, "[%s] %s\n", show(now()).c_str(), text.c_str());
        if (history_.size() == 48) history_.pop_front();
        history_.push_back({now(), std::move(text)});
    }

    template <class... Parts>
    [[noreturn]] void fail(const Parts&... parts) const {
        std::ostringstream where;
        where << "at " << show(now()) << " ns (origin " << show(origin_) << ", " << show(now() - origin_)
              << " ns since; tick " << show(tick_) << " ns, max_pending " << options_.max_pending
              << ", max_run_per_wakeup " << options_.max_run_per_wakeup << ", "
              << (per_tick_ ? "per_tick" : "per_schedule") << ")";
        fail_with_history(
            "fuzz_wheel_timer", where.str(), history_, [](const auto& e) { return "[" + show(e.at) + "] " + e.text; },
            parts...);
    }

    void check_not_early(std::size_t id, const record& r, i128 t) const {
        if (r.early_ok) return;
        const i128 slack = r.floating ? float_rounding_slack : 0;
        if (t < r.due - slack)
            fail("early: timeout ", id, " (", r.what, ") ran at ", show(t), ", due ", show(r.due), " (",
                 show(r.due - t), " ns early)");
    }

    // ---- the model's bookkeeping ----

    [[nodiscard]] bool counts(const record& r) const noexcept {
        return r.st == state::pending && !(r.k == kind::wait && r.stop_seen);
    }

    // The model's pending count: exact outside callbacks; inside one, waits may have completed
    // in the same wake-up (their handlers are queued): [lo, hi].
    std::pair<std::size_t, std::size_t> pending_range() const {
        std::size_t lo = 0, hi = 0;
        for (const auto& r : records_) {
            if (!counts(r)) continue;
            ++hi;
            if (r.k != kind::wait || depth_ == 0) ++lo;
        }
        return {lo, hi};
    }

    void mark_stopped(record& r) {
        if (r.st != state::pending) return;
        if (r.k == kind::wait)
            r.stop_seen = true;
        else
            r.st = state::stopped;
    }

    // Whether the wheel must refuse (1), must accept (0), or either (-1: the range straddles it).
    int expect_refusal(bool moving) const {
        if (stopped_) return 1;
        if (options_.max_pending == 0 || moving) return 0;
        const auto [lo, hi] = pending_range();
        if (hi < options_.max_pending) return 0;
        if (lo >= options_.max_pending) return 1;
        return -1;
    }

    std::size_t add_record(kind k, i128 due, bool relative, bool floating, const plan& p, std::string what) {
        record r;
        r.k = k;
        r.sched = now();
        r.due = due > ns_max ? never : due;
        const i128 slack = relative ? (per_tick_ ? 2 * tick_ : tick_) : tick_;
        r.late = r.due >= never ? never : std::max(r.due, r.sched) + slack;
        r.early_ok = switch_on_;
        r.floating = floating;
        r.p = p;
        r.what = std::move(what);
        records_.push_back(std::move(r));
        return records_.size() - 1;
    }

    void check_refusal(std::size_t id, int expected, bool refused, const idlewheel::error_code& ec) {
        record& r = records_[id];
        const auto [lo, hi] = pending_range();
        if (expected == 1 && !refused)
            fail("accepted ", r.what, " although the wheel is ", stopped_ ? "stopped" : "full", " (model pending ", lo,
                 "-", hi, ", max_pending ", options_.max_pending, ")");
        if (expected == 0 && refused)
            fail("refused ", r.what, " with '", ec.message(), "' (model pending ", lo, "-", hi, ", max_pending ",
                 options_.max_pending, ", stopped ", stopped_, ")");
        if (refused) {
            const auto want =
                idlewheel::make_error_code(stopped_ ? idlewheel::error::stopped : idlewheel::error::too_many_pending);
            if (ec != want) fail("refused ", r.what, " with '", ec.message(), "', expected '", want.message(), "'");
            r.st = state::refused;
            r.refused_with = ec;
        }
    }

    [[noreturn]] void throw_for(std::size_t id) {
        note("  throws " + std::to_string(id));
        thrown_.push_back(id);
        throw fuzz_exception{id};
    }

    // ---- operations (from the input, or from inside a callback) ----

    std::string what_of(const char* name, const delay_spec& d) { return std::string(name) + " after " + describe(d); }

    void schedule_handle(unsigned slot, const delay_spec& d, const plan& p, std::string what) {
        const int expected = expect_refusal(false);
        const std::size_t id = add_record(kind::handle, now() + exact_ns(d), true, is_floating(d), p, std::move(what));
        note("schedule handle " + std::to_string(id) + " in slot " + std::to_string(slot) + ": " + records_[id].what);
        bool refused = false;
        idlewheel::error_code ec;
        try {
            call_guard g(*this);
            idlewheel::timeout t;
            visit_delay(d, [&](auto delay) { t = wheel_->schedule(delay, [this, id] { fired(id, kind::handle); }); });
            if (slot < slot_count) {
                handles_[slot] = std::move(t);
                handle_ids_[slot] = static_cast<long>(id);
            }
        } catch (const idlewheel::system_error& e) {
            refused = true;
            ec = e.code();
        }
        check_refusal(id, expected, refused, ec);
    }

    void spawn(const delay_spec& d, std::string what) { schedule_handle(slot_count, d, {}, std::move(what)); }

    idlewheel::timer_node& node_at(unsigned slot) {
        auto& s = nodes_[slot];
        if (!s.node) s.node.emplace(idlewheel::timer_callback{&harness::node_fired, &s});
        return *s.node;
    }

    // A new record for node `slot`, replacing a pending one (a move, never refused by max_pending).
    template <class Call>
    void schedule_node_with(unsigned slot, i128 due, bool relative, bool floating, const plan& p, std::string what,
                            Call&& call) {
        auto& s = nodes_[slot];
        idlewheel::timer_node& node = node_at(slot);
        const long old = s.id;
        const bool moving = old >= 0 && records_[static_cast<std::size_t>(old)].st == state::pending;
        if (moving != node.pending()) fail("node ", slot, " pending() says ", node.pending(), ", the model ", moving);
        const int expected = expect_refusal(moving);
        const std::size_t id = add_record(kind::node, due, relative, floating, p, std::move(what));
        records_[id].slot = slot;
        note("schedule node " + std::to_string(slot) + " as " + std::to_string(id) + ": " + records_[id].what);
        bool refused = false;
        idlewheel::error_code ec;
        try {
            call_guard g(*this);
            call(node);
        } catch (const idlewheel::system_error& e) {
            refused = true;
            ec = e.code();
        }
        check_refusal(id, expected, refused, ec);
        if (!refused) {
            if (moving) records_[static_cast<std::size_t>(old)].st = state::superseded;
            s.id = static_cast<long>(id);
        }
    }

    void schedule_node(unsigned slot, const delay_spec& d, const plan& p) {
        schedule_node_with(
            slot, now() + exact_ns(d), true, is_floating(d), p, what_of("node", d),
            [&](idlewheel::timer_node& node) { visit_delay(d, [&](auto delay) { wheel_->schedule(node, delay); }); });
    }

    void schedule_at(unsigned slot, i128 when, const plan& p) {
        schedule_node_with(slot, when, false, false, p, "schedule_at " + show(when), [&](idlewheel::timer_node& node) {
            wheel_->schedule_at(node, manual_clock::time_point(ns(static_cast<std::int64_t>(when))));
        });
    }

    void async_wait(unsigned slot, const delay_spec& d, const plan& p) {
        const int expected = expect_refusal(false);
        const std::size_t id =
            add_record(kind::wait, now() + exact_ns(d), true, is_floating(d), p, what_of("async_wait", d));
        const bool bind = signal_owner_[slot] < 0;
        note("async_wait " + std::to_string(id) +
             (bind ? " on signal " + std::to_string(slot) : std::string(" (no signal)")) + ": " + records_[id].what);
        {
            call_guard g(*this);
            visit_delay(d, [&](auto delay) {
                if (bind)
                    wheel_->async_wait(delay,
                                       net::bind_cancellation_slot(signals_[slot].slot(), wait_handler{this, id}));
                else
                    wheel_->async_wait(delay, wait_handler{this, id});
            });
        }
        if (bind) {
            records_[id].signal = static_cast<int>(slot);
            signal_owner_[slot] = static_cast<long>(id);
        }
        // A refusal completes as if by post: predicted now, checked by the handler.
        if (expected == 1) {
            records_[id].st = state::refused;
            records_[id].refused_with =
                idlewheel::make_error_code(stopped_ ? idlewheel::error::stopped : idlewheel::error::too_many_pending);
        } else if (expected == -1) {
            fail("internal: an async_wait outside a callback with an uncertain count");
        }
    }

    void cancel(std::uint8_t what, unsigned slot) {
        switch (what % 3) {
            case 0: {
                const long id = handle_ids_[slot];
                const bool expected = id >= 0 && records_[static_cast<std::size_t>(id)].st == state::pending;
                note("cancel handle slot " + std::to_string(slot) + " (" + std::to_string(id) + ")");
                bool got = false;
                {
                    call_guard g(*this);
                    got = handles_[slot].cancel();
                }
                if (got != expected) fail("cancel() of handle ", id, " returned ", got, ", the model says ", expected);
                if (got) records_[static_cast<std::size_t>(id)].st = state::cancelled;
                break;
            }
            case 1: {
                auto& s = nodes_[slot];
                const bool expected = s.id >= 0 && records_[static_cast<std::size_t>(s.id)].st == state::pending;
                note("cancel node " + std::to_string(slot) + " (" + std::to_string(s.id) + ")");
                bool got = false;
                if (s.node) {
                    call_guard g(*this);
                    got = s.node->cancel();
                }
                if (got != expected) fail("cancel() of node ", slot, " returned ", got, ", the model says ", expected);
                if (got) records_[static_cast<std::size_t>(s.id)].st = state::cancelled;
                break;
            }
            default: {
                const long id = signal_owner_[slot];
                note("emit terminal cancellation on signal " + std::to_string(slot) + " (wait " + std::to_string(id) +
                     ")");
                if (id >= 0) records_[static_cast<std::size_t>(id)].cancel_emitted = true;
                call_guard g(*this);
                signals_[slot].emit(net::cancellation_type::terminal);
                break;
            }
        }
    }

    void destroy_node(unsigned slot) {
        auto& s = nodes_[slot];
        if (!s.node) return;
        note("destroy node " + std::to_string(slot));
        if (s.id >= 0 && records_[static_cast<std::size_t>(s.id)].st == state::pending)
            records_[static_cast<std::size_t>(s.id)].st = state::cancelled;
        s.node.reset();
    }

    void stop() {
        note("stop");
        std::size_t handles = 0;
        for (const auto& r : records_)
            if (r.k == kind::handle && r.st == state::pending) ++handles;
        std::vector<idlewheel::timeout> unrun;
        {
            call_guard g(*this);
            unrun = wheel_->stop();
        }
        stopped_ = true;
        for (auto& r : records_) mark_stopped(r);
        if (unrun.size() != handles)
            fail("stop() returned ", unrun.size(), " handles, the model has ", handles, " pending");
        for (const auto& t : unrun)
            if (!t.cancelled()) fail("a handle stop() returned does not report cancelled()");
    }

    void expire_all_now() {
        note("expire_all");
        for (auto& r : records_)
            if (counts(r)) r.early_ok = true;
        if (depth_ != 0) {
            call_guard g(*this);
            wheel_->expire_all();
            return;
        }
        std::size_t ran_before = 0;
        for (const auto& r : records_)
            if (r.st == state::ran && r.k != kind::wait) ++ran_before;
        std::size_t returned = 0;
        const bool completed = guarded([&] { returned = wheel_->expire_all(); });
        std::size_t ran_after = 0;
        for (const auto& r : records_)
            if (r.st == state::ran && r.k != kind::wait) ++ran_after;
        if (completed && returned < ran_after - ran_before)
            fail("expire_all() returned ", returned, ", but ", ran_after - ran_before, " callbacks ran in it");
    }

    void toggle_switch() {
        switch_on_ = !switch_on_;
        note(switch_on_ ? "set_expire_immediately(true)" : "set_expire_immediately(false)");
        if (switch_on_) {
            switch_since_ = now();
            for (auto& r : records_)
                if (counts(r)) r.early_ok = true;
        }
        call_guard g(*this);
        wheel_->set_expire_immediately(switch_on_);
    }

    // What a callback (or a wait handler) does.
    void act(std::size_t id, const plan& p) {
        switch (p.what) {
            case behaviour::none:
            case behaviour::count: break;
            case behaviour::throws: throw_for(id);
            case behaviour::spawn: spawn(p.child, "spawned by " + std::to_string(id) + ", " + describe(p.child)); break;
            case behaviour::fill:
                for (int i = 0; i < 80; ++i) {
                    const std::size_t before = records_.size();
                    spawn(p.child, "filling, by " + std::to_string(id) + ", " + describe(p.child));
                    if (records_[before].st == state::refused || stopped_ || (options_.max_pending == 0 && i == 7))
                        break;
                }
                break;
            case behaviour::cancel_handle: cancel(0, p.operand % slot_count); break;
            case behaviour::reschedule_node: schedule_node(p.operand % slot_count, p.child, {}); break;
            case behaviour::expire_all: expire_all_now(); break;
            case behaviour::stop: stop(); break;
            case behaviour::destroy_node: destroy_node(p.operand % slot_count); break;
        }
    }

    // ---- the driver ----

    // Runs `f` (a poll, or the harness's expire_all()); every fuzz exception that leaves it is
    // checked off, and then the io_context is polled until one poll returns normally (the rest
    // of the batch continues through it). Anything else leaving is a failure.
    // True if `f` itself returned normally.
    template <class F>
    bool guarded(F&& f) {
        if (catching(f)) return true;
        for (int more = 0; more < 100000; ++more)
            if (catching([this] { idlewheel::test::poll(io_); })) return false;
        fail("poll() kept throwing");
    }

    template <class F>
    bool catching(F&& f) {
        try {
            f();
            return true;
        } catch (const fuzz_exception& e) {
            note("  caught the exception of " + std::to_string(e.id));
            const auto it = std::find(thrown_.begin(), thrown_.end(), e.id);
            if (it == thrown_.end()) fail("the exception of timeout ", e.id, " left twice (or was never thrown)");
            thrown_.erase(it);
        } catch (const std::exception& e) {
            fail("an unexpected exception left the io_context: ", e.what());
        } catch (...) {
            fail("an unexpected exception of unknown type left the io_context");
        }
        return false;
    }

    void poll_all() {
        guarded([this] { idlewheel::test::poll(io_); });
        if (!thrown_.empty()) fail("the exception thrown by timeout ", thrown_.front(), " never left poll()");
    }

    void poll_and_check() {
        poll_all();
        const i128 t = now();
        // Nothing missed.
        for (std::size_t id = 0; id < records_.size(); ++id) {
            const record& r = records_[id];
            if (counts(r) && r.late <= t)
                fail("missed: timeout ", id, " (", r.what, ") scheduled at ", show(r.sched), ", due ", show(r.due),
                     ", still pending at ", show(t), " (late from ", show(r.late), ")");
        }
        // The switch: a wake-up at a tick boundary runs everything scheduled before it.
        if (switch_on_ && !stopped_ && (t - origin_) % tick_ == 0 && switch_since_ < t) {
            for (std::size_t id = 0; id < records_.size(); ++id) {
                const record& r = records_[id];
                if (counts(r) && r.sched < t)
                    fail("the switch is on, but timeout ", id, " (", r.what, ") scheduled at ", show(r.sched),
                         " is still pending after the wake-up at ", show(t));
            }
        }
        // pending(), handles and nodes.
        const auto [lo, hi] = pending_range();
        if (wheel_->pending() != lo || lo != hi)
            fail("pending() is ", wheel_->pending(), ", the model has ", lo, (lo != hi ? " (uncertain)" : ""));
        if (wheel_->stats().pending != lo) fail("stats().pending is ", wheel_->stats().pending, ", the model has ", lo);
        for (unsigned i = 0; i < slot_count; ++i) {
            if (handle_ids_[i] >= 0) {
                const record& r = records_[static_cast<std::size_t>(handle_ids_[i])];
                const auto& h = handles_[i];
                if (h.pending() != (r.st == state::pending) || h.expired() != (r.st == state::ran) ||
                    h.cancelled() != (r.st == state::cancelled || r.st == state::stopped))
                    fail("handle ", handle_ids_[i], " reports pending ", h.pending(), " expired ", h.expired(),
                         " cancelled ", h.cancelled(), "; the model: ", state_names[static_cast<unsigned>(r.st)]);
            }
            const auto& s = nodes_[i];
            if (s.node && s.id >= 0) {
                const bool expected = records_[static_cast<std::size_t>(s.id)].st == state::pending;
                if (s.node->pending() != expected)
                    fail("node ", i, " pending() ", s.node->pending(), ", the model ", expected);
            }
        }
    }

    plan read_plan(bool wait) {
        plan p;
        p.what = decode_behaviour(in_.byte());
        if (wait && p.what != behaviour::throws && p.what != behaviour::spawn) p.what = behaviour::none;
        p.operand = in_.byte();
        if (p.what == behaviour::spawn || p.what == behaviour::fill || p.what == behaviour::reschedule_node)
            p.child = decode_delay(in_, options_.tick);
        return p;
    }

    i128 read_when() {
        const i128 t = now();
        const std::uint8_t b = in_.byte();
        const i128 v = in_.byte();
        i128 w = 0;
        switch (static_cast<when>(b % static_cast<unsigned>(when::count))) {
            case when::min: w = ns_min; break;
            case when::max: w = ns_max; break;
            case when::max_minus_1ns: w = ns_max - 1; break;
            case when::epoch: w = 0; break;
            case when::now: w = t; break;
            case when::now_minus_1ns: w = t - 1; break;
            case when::now_plus_1ns: w = t + 1; break;
            case when::origin: w = origin_; break;
            case when::origin_minus_1ns: w = origin_ - 1; break;
            case when::next_boundary: w = origin_ + ceil_div(t - origin_, tick_) * tick_; break;
            case when::quarter_ticks_ahead: w = t + v * tick_ / 4; break;
            case when::ticks_behind: w = t - v * tick_; break;
            case when::raw: w = static_cast<std::int64_t>(in_.u64()); break;
            case when::power_of_two_ahead: w = t + (i128{1} << (v % 63)); break;
            case when::min_plus_1ns: w = ns_min + 1; break;
            case when::count: break;
        }
        return std::clamp(w, ns_min, ns_max);
    }

    // Moves the clock to `to` (capped), polling at every tick boundary on the way unless `jump`.
    void move_clock(i128 to, bool jump) {
        to = std::min(to, clock_cap());
        const i128 from = now();
        if (to <= from) return;
        note(std::string(jump ? "jump " : "advance ") + show(to - from) + " ns");
        if (jump) {
            manual_clock::advance(ns(static_cast<std::int64_t>(to - from)));
            // A late wake-up: a per_tick delay starts at it, so its bound moves with it.
            if (per_tick_)
                for (auto& r : records_)
                    if (counts(r) && r.late < never) r.late += to - from;
            poll_and_check();
            return;
        }
        while (now() < to) {
            const i128 boundary = origin_ + (ceil_div(now() - origin_ + 1, tick_)) * tick_;
            const i128 next = std::min(to, boundary);
            manual_clock::advance(ns(static_cast<std::int64_t>(next - now())));
            poll_and_check();
        }
    }

    void advance(std::uint8_t b) {
        const i128 t = now();
        const i128 v = b & 63U;
        const i128 to_boundary = origin_ + ceil_div(t - origin_ + 1, tick_) * tick_ - t;
        switch (b >> 6) {
            case 0: move_clock(t + tick_ * v / 64, false); break;
            case 1: move_clock(t + tick_ * (v % 8 + 1), false); break;
            case 2: move_clock(t + to_boundary + (v % 3) - 1, false); break;
            default: move_clock(t + (i128{1} << (v % max_jump_log2)), true); break;
        }
    }

    void advance_to_due(std::uint8_t index, std::uint8_t offset) {
        std::vector<std::size_t> candidates;
        for (std::size_t id = 0; id < records_.size(); ++id)
            if (counts(records_[id]) && records_[id].due < clock_cap()) candidates.push_back(id);
        if (candidates.empty()) return;
        const record& r = records_[candidates[index % candidates.size()]];
        const i128 offsets[4] = {-1, 0, 1, tick_};
        move_clock(std::min(r.due + offsets[offset % 4], now() + (i128{1} << max_jump_log2)), true);
    }

    void step() {
        const std::uint8_t code = in_.byte();
        if (in_.exhausted()) return;
        switch (decode_op(code)) {
            case op::schedule: {
                const unsigned slot = in_.byte() % slot_count;
                const delay_spec d = decode_delay(in_, options_.tick);
                const plan p = read_plan(false);
                schedule_handle(slot, d, p, what_of("handle", d));
                break;
            }
            case op::schedule_node: {
                const unsigned slot = in_.byte() % slot_count;
                const delay_spec d = decode_delay(in_, options_.tick);
                schedule_node(slot, d, read_plan(false));
                break;
            }
            case op::schedule_at: {
                const unsigned slot = in_.byte() % slot_count;
                const i128 w = read_when();
                schedule_at(slot, w, read_plan(false));
                break;
            }
            case op::async_wait: {
                const unsigned slot = in_.byte() % slot_count;
                const delay_spec d = decode_delay(in_, options_.tick);
                async_wait(slot, d, read_plan(true));
                break;
            }
            case op::cancel: {
                const std::uint8_t what = in_.byte();
                cancel(what, in_.byte() % slot_count);
                break;
            }
            case op::destroy_node: destroy_node(in_.byte() % slot_count); break;
            case op::advance: advance(in_.byte()); break;
            case op::advance_to_due: {
                const std::uint8_t index = in_.byte();
                advance_to_due(index, in_.byte());
                break;
            }
            case op::poll: note("poll"); break;
            case op::expire_all: expire_all_now(); break;
            case op::stop: stop(); break;
            case op::toggle_switch: toggle_switch(); break;
        }
    }

    fuzz_input& in_;
    idlewheel::wheel_options options_;
    bool per_tick_ = false;
    i128 tick_ = 0;
    i128 origin_ = 0;
    std::array<net::cancellation_signal, slot_count> signals_;  // outlive the io_context
    std::array<long, slot_count> signal_owner_{-1, -1, -1, -1, -1, -1, -1, -1};
    std::deque<record> records_;
    std::array<node_slot, slot_count> nodes_;  // outlive the wheel
    net::io_context io_;
    std::optional<wheel_type> wheel_;
    std::array<idlewheel::timeout, slot_count> handles_;
    std::array<long, slot_count> handle_ids_{-1, -1, -1, -1, -1, -1, -1, -1};
    std::vector<std::size_t> thrown_;
    bool stopped_ = false;
    bool switch_on_ = false;
    i128 switch_since_ = 0;
    int depth_ = 0;
    int in_call_ = 0;
    std::deque<event> history_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    harness h(in);
    h.run();
    return 0;
}
