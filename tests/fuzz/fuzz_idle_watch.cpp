// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/idle_watch.hpp>

// libFuzzer target: sequences of idle_watch operations (input format: idle_watch_input.hpp)
// on one basic_wheel_timer<manual_clock>, driven by io_context::poll() only, against a model
// that knows the exact time and order of every activity.
//
// The driver polls after every operation, and an advance of the clock stops and polls at every
// tick boundary it crosses, so every wake-up of the wheel is on time. Then, for a running watch
// and a kind k with time T:
//
//   B = max(start, latest activity of kind k, latest report of kind k)   (exact times)
//       where reader = on_read; writer = on_write, plus on_write_progress when observe_output
//       was on at that call and is on now; all = reader or writer.
//
//   never early:  a report of k comes at a time R >= B + T.
//   never late:   R <= L = max(B + T, F) + slack, and a poll at a time > L without the report
//                 is a missed report. F is the time of the last start() or set_options() (new
//                 options take effect "at the next tick"). slack is 1 tick when T is a whole
//                 number of ticks, else 2 ticks - 1 ns.
//     Why: activity is stamped at the wheel's next tick boundary after it (up to 1 tick after
//     the activity, and then on a boundary), and the watch's deadline is rounded up to a tick
//     boundary (less than 1 tick, and nothing when the stamp is on a boundary and T is whole
//     ticks). A wake-up comes exactly at its boundary because the driver polls there. That is
//     idle_watch.hpp's promise: at most two ticks late, at most one when wake-ups are on time
//     and T is a whole number of ticks. (A report at the very poll after F is within 1 tick.)
//   first:        true for the first report of k since start(), and afterwards exactly when
//                 activity of kind k happened (in program order) since the last report of k.
//   never:        for a stopped or destroyed watch, or for a kind that is off.
//
// The handler of a watch may act once per handler_action operation: stop, destroy or reset
// itself, change its options, or stop, destroy, start or touch another watch, all from inside
// the report; the model follows. Reports are also counted against the liveness_stats, and a
// wheel whose watches are all destroyed must have nothing pending.
//
// manual_clock::reset() at every input keeps a run deterministic. IDLEWHEEL_FUZZ_TRACE=1 prints
// every operation and report.

#include "fuzz_input.hpp"
#include "idle_watch_input.hpp"
#include "support/manual_io.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace idlewheel::fuzz;
using idlewheel::idle_kind;
using idlewheel::idle_options;
using idlewheel::manual_clock;
using wheel_type = idlewheel::basic_wheel_timer<manual_clock>;
using watch_type = idlewheel::basic_idle_watch<wheel_type>;

constexpr ns never = ns::min();

std::string show(ns t) {
    if (t == never) return "never";
    return std::to_string(t.count()) + " ns";
}

struct handler_action {
    handler_action_kind kind = handler_action_kind::none;
    unsigned other = 0;
    idle_options options;
};

class harness;

// What a watch's handler gets: the harness, and which watch (incarnation) it belongs to. Kept
// for the whole input, so that a report for a destroyed watch is seen as such, not as memory.
struct watch_context {
    harness* run;
    unsigned slot;
    bool alive;
};

// One slot: the watch, and the model of it.
struct watch_slot {
    std::unique_ptr<watch_type> watch;
    watch_context* context = nullptr;
    bool running = false;
    std::array<ns, 3> time{};  // reader, writer, all; 0 = off
    bool observe = false;
    ns start{0};
    ns floor{0};  // last start() or set_options()
    ns last_read = never, last_write = never, last_progress = never;
    std::uint64_t read_seq = 0, write_seq = 0, progress_seq = 0;
    std::array<bool, 3> reported{};
    std::array<ns, 3> last_report{never, never, never};
    std::array<std::uint64_t, 3> report_seq{};
    handler_action action;
};

// The history kept for a failure report: compact, formatted only when printed. An entry is an
// operation of the input (its idle_op; handler_action is the plan of a handler's action) or
// what the watches answered.
enum class answer : std::uint8_t { none, report, act, refused };

struct event {
    struct what {
        constexpr what(idle_op o) noexcept : op(o) {}  // NOLINT(google-explicit-constructor)
        constexpr what(answer a) noexcept : ans(a) {}  // NOLINT(google-explicit-constructor)
        idle_op op = idle_op::poll;
        answer ans = answer::none;  // none: the entry is the operation `op`
    };
    what type = idle_op::poll;
    unsigned slot = 0;
    std::int64_t at = 0;     // ns since the wheel's origin
    std::int64_t value = 0;  // advance: ns; plan/act: action; report: kind * 2 + first
    unsigned other = 0;
    idle_options options;
};

std::string show(const idle_options& o) {
    std::ostringstream os;
    os << "{reader " << o.reader.count() << ", writer " << o.writer.count() << ", all " << o.all.count()
       << (o.observe_output ? ", observe_output}" : "}");
    return os.str();
}

constexpr std::array<const char*, 13> action_names{
    "nothing", "stop itself", "destroy itself", "reset itself", "set its options",
    "stop",    "destroy",     "start",          "on_read of",   "on_write of",
    "fill the wheel", "release the wheel", "?"};

std::string describe(const event& e) {
    std::ostringstream os;
    os << "[" << e.at << " ns] ";
    const auto action =
        static_cast<std::size_t>(e.value) < action_names.size() ? action_names[static_cast<std::size_t>(e.value)] : "?";
    if (e.type.ans == answer::none) {
        switch (e.type.op) {
            case idle_op::create: os << "create " << e.slot << " " << show(e.options); break;
            case idle_op::destroy: os << "destroy " << e.slot; break;
            case idle_op::start: os << "start " << e.slot; break;
            case idle_op::reset: os << "reset " << e.slot; break;
            case idle_op::stop: os << "stop " << e.slot; break;
            case idle_op::set_options: os << "set_options " << e.slot << " " << show(e.options); break;
            case idle_op::read: os << "on_read " << e.slot; break;
            case idle_op::write: os << "on_write " << e.slot; break;
            case idle_op::write_progress: os << "on_write_progress " << e.slot; break;
            case idle_op::advance: os << "advance " << e.value << " ns"; break;
            case idle_op::poll: os << "poll"; break;
            case idle_op::handler_action:
                os << "the handler of " << e.slot << " will " << action << " (other " << e.other << ", options "
                   << show(e.options) << ")";
                break;
        }
        return os.str();
    }
    switch (e.type.ans) {
        case answer::none: break;
        case answer::report:
            os << "  report: " << e.slot << " " << idlewheel::to_string(static_cast<idle_kind>(e.value / 2))
               << ((e.value & 1) != 0 ? " (first)" : " (repeat)");
            break;
        case answer::refused: os << "  refused: the wheel is full"; break;
        case answer::act: os << "  its handler does: " << action << " (other " << e.other << ")"; break;
    }
    return os.str();
}

// The header of an input; reading it also resets the manual clock, before the wheel reads its
// origin.
struct setup {
    explicit setup(fuzz_input& in) {
        const std::uint8_t t = in.byte();
        const std::uint8_t b = in.byte();
        const std::uint8_t s = in.byte();
        options.tick = ticks[t % ticks.size()];
        options.max_run_per_wakeup = batch_limits[b % batch_limits.size()];
        slots = slot_counts[s % slot_counts.size()];
        options.max_pending = pending_limits[(s >> 2) % pending_limits.size()];
        manual_clock::reset();
        origin = manual_clock::now();
    }
    idlewheel::wheel_options options;
    unsigned slots;
    manual_clock::time_point origin;
};

class harness {
public:
    explicit harness(fuzz_input& in)
        : in_(in),
          setup_(in),
          tick_(setup_.options.tick),
          origin_(setup_.origin),
          wheel_(io_, setup_.options),
          slots_(setup_.slots) {
        trace("tick ", tick_.count(), " ns, batch ", setup_.options.max_run_per_wakeup, ", slots ", slots_.size());
    }

    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;

    void run() {
        while (!in_.exhausted()) {
            step();
            poll_and_check();
        }
        const auto& s = live_;
        if (s.reader_idle + s.writer_idle + s.all_idle != reports_)
            fail("liveness_stats counts ", s.reader_idle + s.writer_idle + s.all_idle,
                 " idle reports, the handlers saw ", reports_);
        for (auto& t : taken_) t.cancel();
        taken_.clear();
        for (unsigned i = 0; i < slots_.size(); ++i) destroy(i);
        poll_and_check();
        if (wheel_.pending() != 0) fail("every watch destroyed, but the wheel has ", wheel_.pending(), " pending");
    }

    // The handler of every watch.
    static void on_idle(void* context, idle_kind kind, bool first) {
        auto& c = *static_cast<watch_context*>(context);
        c.run->report(c, kind, first);
    }

private:
    [[nodiscard]] ns now() const noexcept { return manual_clock::now() - origin_; }

    template <class... Parts>
    void trace(const Parts&... parts) const {
        if (!trace_enabled()) return;
        std::ostringstream os;
        os << "[" << now().count() << " ns] ";
        (os << ... << parts);
        std::fprintf(stderr, "%s\n", os.str().c_str());
    }

    template <class... Parts>
    [[noreturn]] void fail(const Parts&... parts) const {
        std::ostringstream where;
        where << "at " << now().count() << " ns (tick " << tick_.count() << " ns, " << now() / tick_
              << " ticks since the origin; max_run_per_wakeup " << setup_.options.max_run_per_wakeup << ", "
              << slots_.size() << " slots)";
        fail_with_history(
            "fuzz_idle_watch", where.str(), history_, [](const event& e) { return describe(e); }, parts...);
    }

    void record(event e) {
        e.at = now().count();
        if (history_.size() == history_length) history_.pop_front();
        history_.push_back(e);
        if (trace_enabled()) std::fprintf(stderr, "%s\n", describe(e).c_str());
    }
    void record(event::what type, unsigned slot) {
        event e;
        e.type = type;
        e.slot = slot;
        record(e);
    }

    unsigned slot_of(std::uint8_t b) const noexcept { return b % static_cast<unsigned>(slots_.size()); }

    idle_options read_options(bool& start) {
        idle_options o;
        o.reader = decode_idle_time(in_.byte(), tick_);
        o.writer = decode_idle_time(in_.byte(), tick_);
        o.all = decode_idle_time(in_.byte(), tick_);
        const std::uint8_t flags = in_.byte();
        o.observe_output = (flags & 1U) != 0;
        start = (flags & 2U) != 0;
        return o;
    }

    // One operation of the input.
    void step() {
        const std::uint8_t code = in_.byte();
        if (in_.exhausted()) return;  // operands past the end read as 0; an opcode does not
        switch (decode_op(code)) {
            case idle_op::create: {
                const unsigned slot = slot_of(in_.byte());
                bool start_now = false;
                const idle_options o = read_options(start_now);
                create(slot, o);
                if (start_now) start(slot, false);
                break;
            }
            case idle_op::destroy:
                destroy(slot_of(in_.byte()));
                break;
            case idle_op::start:
                start(slot_of(in_.byte()), false);
                break;
            case idle_op::reset:
                start(slot_of(in_.byte()), true);
                break;
            case idle_op::stop:
                stop(slot_of(in_.byte()));
                break;
            case idle_op::set_options: {
                const unsigned slot = slot_of(in_.byte());
                bool unused = false;
                set_options(slot, read_options(unused));
                break;
            }
            case idle_op::read:
                read(slot_of(in_.byte()));
                break;
            case idle_op::write:
                write(slot_of(in_.byte()));
                break;
            case idle_op::write_progress:
                write_progress(slot_of(in_.byte()));
                break;
            case idle_op::advance:
                advance(in_.byte());
                break;
            case idle_op::poll: record(idle_op::poll, 0); break;
            case idle_op::handler_action: {
                const unsigned slot = slot_of(in_.byte());
                handler_action a;
                a.kind = decode_action(in_.byte());
                a.other = slot_of(in_.byte());
                bool unused = false;
                a.options = read_options(unused);
                record({idle_op::handler_action, slot, 0, static_cast<std::int64_t>(a.kind), a.other, a.options});
                slots_[slot].action = a;
                break;
            }
        }
    }

    // ---- operations, on the watch and on its model (also called from inside handlers) ----

    void create(unsigned slot, const idle_options& o) {
        destroy(slot);
        auto& w = slots_[slot];
        w = watch_slot{};
        contexts_.push_back({this, slot, true});
        w.context = &contexts_.back();
        w.watch = std::make_unique<watch_type>(wheel_, idlewheel::idle_handler{&harness::on_idle, w.context}, o, &live_);
        w.time = {o.reader, o.writer, o.all};
        w.observe = o.observe_output;
        record({idle_op::create, slot, 0, 0, 0, o});
    }

    void destroy(unsigned slot) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(idle_op::destroy, slot);
        w.context->alive = false;
        w.running = false;
        w.watch.reset();
    }

    void start(unsigned slot, bool as_reset) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(as_reset ? idle_op::reset : idle_op::start, slot);
        const bool was_running = w.watch->running();
        try {
            as_reset ? w.watch->reset() : w.watch->start();
        } catch (const idlewheel::system_error& e) {
            // Documented: start() (and reset()) put the watch's entry in the wheel, and a full
            // wheel refuses a first arm; restarting a running watch (from its own handler too,
            // while its entry is out of the wheel) moves its own entry and is never refused.
            if (was_running) fail("restarting running watch ", slot, " threw: ", e.what());
            refused(e, "start()");
            if (w.watch->running()) fail("a refused start() left watch ", slot, " running");
            w.running = false;
            return;
        }
        w.running = true;
        w.start = w.floor = now();
        w.reported = {};
        w.last_report = {never, never, never};
    }

    void stop(unsigned slot) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(idle_op::stop, slot);
        w.watch->stop();
        w.running = false;
    }

    void set_options(unsigned slot, const idle_options& o) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record({idle_op::set_options, slot, 0, 0, 0, o});
        bool refused_now = false;
        try {
            w.watch->set_options(o);
        } catch (const idlewheel::system_error& e) {
            // Documented never to count against max_pending for a running watch (its own handler
            // included): only a stopped wheel may refuse it.
            if (e.code() != idlewheel::make_error_code(idlewheel::error::stopped))
                fail("set_options() of running watch ", slot, " threw: ", e.what());
            refused(e, "set_options()");
            refused_now = true;
        }
        w.time = {o.reader, o.writer, o.all};
        w.observe = o.observe_output;
        w.floor = now();
        if (refused_now) {
            if (w.watch->running()) fail("a refused set_options() left watch ", slot, " running");
            w.running = false;
        }
    }

    // A refusal of the wheel is too_many_pending at a full wheel, nothing else.
    void refused(const idlewheel::system_error& e, const char* what) {
        record({answer::refused, 0, 0, 0, 0, {}});
        if (e.code() != idlewheel::make_error_code(idlewheel::error::too_many_pending))
            fail(what, " threw ", e.what());
        if (setup_.options.max_pending == 0 || wheel_.pending() < setup_.options.max_pending)
            fail(what, " refused with the wheel at ", wheel_.pending(), " of max_pending ", setup_.options.max_pending);
    }

    // Takes every free place of the wheel with timeouts an hour away.
    void fill_wheel() {
        if (setup_.options.max_pending == 0) return;
        for (std::size_t i = 0; i <= setup_.options.max_pending; ++i) {
            try {
                taken_.push_back(wheel_.schedule(std::chrono::hours(1), [] {}));
            } catch (const idlewheel::system_error& e) {
                refused(e, "schedule()");
                return;
            }
        }
        fail("the wheel took more than max_pending ", setup_.options.max_pending, " timeouts");
    }

    void read(unsigned slot) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(idle_op::read, slot);
        w.watch->on_read();
        w.last_read = now();
        w.read_seq = ++sequence_;
    }

    void write(unsigned slot) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(idle_op::write, slot);
        w.watch->on_write();
        w.last_write = now();
        w.write_seq = ++sequence_;
    }

    void write_progress(unsigned slot) {
        auto& w = slots_[slot];
        if (!w.watch) return;
        record(idle_op::write_progress, slot);
        w.watch->on_write_progress();
        if (!w.observe) return;  // ignored without observe_output
        w.last_progress = now();
        w.progress_seq = ++sequence_;
    }

    void advance(std::uint8_t amount) {
        const ns to_boundary = tick_ - now() % tick_;
        ns left = decode_advance(amount, tick_, to_boundary);
        record({idle_op::advance, 0, 0, left.count(), 0, {}});
        // Stop at every tick boundary: the wheel's wake-ups are then exactly on time.
        while (left > ns(0)) {
            const ns step = std::min(left, tick_ - now() % tick_);
            manual_clock::advance(step);
            left -= step;
            poll_and_check();
        }
    }

    // ---- the model ----

    [[nodiscard]] static ns base(const watch_slot& w, unsigned k) noexcept {
        const ns read = std::max(w.start, w.last_read);
        ns write = std::max(w.start, w.last_write);
        if (w.observe) write = std::max(write, w.last_progress);
        const ns activity = k == 0 ? read : k == 1 ? write : std::max(read, write);
        return std::max(activity, w.last_report[k]);
    }

    // Activity of kind k after its last report, in program order (for the first flag).
    [[nodiscard]] static bool active_since_report(const watch_slot& w, unsigned k) noexcept {
        const std::uint64_t read = w.read_seq;
        const std::uint64_t write = std::max(w.write_seq, w.observe ? w.progress_seq : 0);
        const std::uint64_t latest = k == 0 ? read : k == 1 ? write : std::max(read, write);
        return latest > w.report_seq[k];
    }

    // The last time a report of k may come; a poll after it without one is a missed report.
    [[nodiscard]] ns late_bound(const watch_slot& w, unsigned k) const noexcept {
        const ns slack = w.time[k] % tick_ == ns(0) ? tick_ : 2 * tick_ - ns(1);
        return std::max(base(w, k) + w.time[k], w.floor) + slack;
    }

    std::string explain(const watch_slot& w, unsigned k) const {
        std::ostringstream os;
        os << "T " << show(w.time[k]) << ", start " << show(w.start) << ", options changed " << show(w.floor)
           << ", last read " << show(w.last_read) << ", last write " << show(w.last_write) << ", last progress "
           << show(w.last_progress) << (w.observe ? " (observed)" : " (not observed)") << ", last report "
           << show(w.last_report[k]) << "; due " << show(base(w, k) + w.time[k]) << ", late from "
           << show(late_bound(w, k));
        return os.str();
    }

    void report(watch_context& c, idle_kind kind, bool first) {
        const auto k = static_cast<unsigned>(kind);
        const ns t = now();
        ++reports_;
        record({answer::report, c.slot, 0, static_cast<std::int64_t>(k * 2 + (first ? 1 : 0)), 0, {}});
        if (k > 2) fail("report of an unknown kind ", k);
        if (!c.alive) fail("report for a destroyed watch (slot ", c.slot, ", ", idlewheel::to_string(kind), ")");
        auto& w = slots_[c.slot];
        if (!w.running) fail("report for a stopped watch ", c.slot, ": ", idlewheel::to_string(kind));
        if (w.time[k] == ns(0)) fail("report for a kind that is off: watch ", c.slot, " ", idlewheel::to_string(kind));
        if (t < base(w, k) + w.time[k])
            fail("early report: watch ", c.slot, " ", idlewheel::to_string(kind), " at ", show(t), "; ", explain(w, k));
        if (t > late_bound(w, k))
            fail("late report: watch ", c.slot, " ", idlewheel::to_string(kind), " at ", show(t), "; ", explain(w, k));
        const bool expected_first = !w.reported[k] || active_since_report(w, k);
        if (first != expected_first)
            fail("wrong first flag: watch ", c.slot, " ", idlewheel::to_string(kind), " at ", show(t), " said ", first,
                 ", expected ", expected_first, "; ", explain(w, k));
        w.reported[k] = true;
        w.last_report[k] = t;
        w.report_seq[k] = ++sequence_;

        const handler_action a = w.action;
        w.action = {};
        act(c.slot, a);
    }

    void act(unsigned self, const handler_action& a) {
        if (a.kind == handler_action_kind::none) return;
        record({answer::act, self, 0, static_cast<std::int64_t>(a.kind), a.other, {}});
        switch (a.kind) {
            case handler_action_kind::none:
                break;
            case handler_action_kind::stop_self:
                stop(self);
                break;
            case handler_action_kind::destroy_self:
                destroy(self);
                break;
            case handler_action_kind::reset_self:
                start(self, true);
                break;
            case handler_action_kind::set_options_self:
                set_options(self, a.options);
                break;
            case handler_action_kind::stop_other:
                stop(a.other);
                break;
            case handler_action_kind::destroy_other:
                destroy(a.other);
                break;
            case handler_action_kind::start_other:
                start(a.other, false);
                break;
            case handler_action_kind::read_other:
                read(a.other);
                break;
            case handler_action_kind::write_other:
                write(a.other);
                break;
            case handler_action_kind::fill_wheel:
                fill_wheel();
                break;
            case handler_action_kind::release:
                for (auto& t : taken_) t.cancel();
                taken_.clear();
                break;
            case handler_action_kind::count:
                break;
        }
    }

    void poll_and_check() {
        idlewheel::test::poll(io_);
        const ns t = now();
        for (unsigned i = 0; i < slots_.size(); ++i) {
            const auto& w = slots_[i];
            if (!w.watch || !w.running) continue;
            for (unsigned k = 0; k < 3; ++k) {
                if (w.time[k] == ns(0)) continue;
                if (t > late_bound(w, k))
                    fail("missed report: watch ", i, " ", idlewheel::to_string(static_cast<idle_kind>(k)), " at ",
                         show(t), "; ", explain(w, k));
            }
        }
    }

    fuzz_input& in_;
    setup setup_;
    ns tick_;
    manual_clock::time_point origin_;
    boost::asio::io_context io_;
    wheel_type wheel_;
    idlewheel::liveness_stats live_;
    std::deque<watch_context> contexts_;
    std::vector<watch_slot> slots_;  // after the wheel: watches die first
    static constexpr std::size_t history_length = 40;
    std::deque<event> history_;
    std::uint64_t sequence_ = 0;
    std::uint64_t reports_ = 0;
    std::vector<idlewheel::timeout> taken_;  // the handlers' fill_wheel
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz_input in(data, size);
    harness h(in);
    h.run();
    return 0;
}
