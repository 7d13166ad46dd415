// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.

// Writes the seed corpus of both fuzz targets: make_corpus <dir> fills <dir>/fuzz_wheel and
// <dir>/fuzz_idle_watch. Deterministic (fixed seeds), so rerunning it rewrites the same files;
// it deletes nothing (a finding copied into the corpus by hand stays).
//
// fuzz_wheel seeds: the target's own loop (wheel_differential + operation_generator) run over a
// recording random source, which writes every 64-bit draw it hands out as the input's bytes. A
// scenario may force the kind of an operation (the generator draws the node, then a roll that
// picks the kind), so that the rare kinds, take_all and rebuild, are in the seeds: the fuzzer
// then mutates around them instead of having to find a 1-in-25 000 roll first.
//
// fuzz_wheel_timer seeds: one short script per class of the contract's edges (every delay
// type at ordinary sizes and at its extremes, a huge odd-period delay, a double that long double
// rounds down, absolute times at the limits from every start of the clock, full wheels, throwing
// callbacks and wait handlers, expire_all, stop, the switch), in both clock_read modes.
//
// fuzz_idle_watch seeds: short scripts written in its input format (idle_watch_input.hpp), one
// per behaviour the library documents (each kind, repeats, observe_output, options changed
// while running, each thing a handler may do inside a report, batches split by
// max_run_per_wakeup), over several tick sizes, plus a few random scripts.

#include "fuzz_input.hpp"
#include "idle_watch_input.hpp"
#include "support/wheel_model.hpp"
#include "wheel_input.hpp"
#include "wheel_timer_input.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using bytes = std::vector<std::uint8_t>;
using namespace idlewheel::fuzz;
using idlewheel::test::op_kind;
using idlewheel::test::tick_type;

void write_file(const fs::path& dir, const std::string& name, const bytes& b) {
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void put_u64(bytes& b, std::uint64_t v) {
    for (unsigned i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// ---- fuzz_wheel ----

// The first roll value of operation_generator::next() that picks each kind (rolls are drawn
// modulo 100 000; see support/wheel_model.hpp).
std::uint64_t roll_for(op_kind k) {
    switch (k) {
        case op_kind::schedule:
            return 0;
        case op_kind::advance:
            return 42'000;
        case op_kind::cancel:
            return 72'000;
        case op_kind::destroy:
            return 82'000;
        case op_kind::run_expired:
            return 86'000;
        case op_kind::take_all:
            return 99'996;
        case op_kind::rebuild:
            return 99'998;
    }
    return 0;
}

class recording_source {
public:
    recording_source(bytes& out, std::uint64_t seed) : out_(out), random_(seed) {}

    void begin_operation(std::optional<op_kind> forced) {
        draw_ = 0;
        forced_ = forced;
    }

    std::uint64_t operator()() {
        std::uint64_t v = random_();
        if (draw_ == 1 && forced_) v = roll_for(*forced_) + v % 2;  // the roll (second draw)
        ++draw_;
        put_u64(out_, v);
        return v;
    }

private:
    bytes& out_;
    std::mt19937_64 random_;
    unsigned draw_ = 0;
    std::optional<op_kind> forced_;
};

// A scenario: how many operations, and which kind to force at step i (nullopt: the generator's
// own choice).
using kind_plan = std::function<std::optional<op_kind>(unsigned step)>;

bytes wheel_seed(std::uint8_t pool, std::uint8_t flags, std::uint64_t start, unsigned steps, std::uint64_t seed,
                 const kind_plan& plan) {
    bytes b{pool, flags};
    put_u64(b, start);
    fuzz_input header(b.data(), b.size());
    const wheel_config c = read_wheel_config(header);
    idlewheel::test::wheel_differential differential(c.pool, c.start);
    idlewheel::test::operation_generator generator(c.removals);
    recording_source source(b, seed);
    for (unsigned i = 0; i < steps; ++i) {
        source.begin_operation(plan(i));
        const auto op = generator.next(differential, source);
        const std::string error = differential.apply(op);
        if (!error.empty())
            std::fprintf(stderr, "make_corpus: the wheel disagrees with the model already: %s\n", error.c_str());
    }
    return b;
}

void write_wheel_corpus(const fs::path& dir) {
    const auto any = [](unsigned) -> std::optional<op_kind> { return std::nullopt; };
    const auto every = [](unsigned n, op_kind k) {
        return [n, k](unsigned i) -> std::optional<op_kind> {
            if (i % n == n - 1) return k;
            return std::nullopt;
        };
    };
    const auto fill_then = [](unsigned fill, op_kind k) {
        return [fill, k](unsigned i) -> std::optional<op_kind> {
            if (i < fill) return op_kind::schedule;
            if (i == fill) return k;
            return std::nullopt;
        };
    };
    const auto cycle = [](std::initializer_list<op_kind> kinds) {
        std::vector<op_kind> v(kinds);
        return [v](unsigned i) -> std::optional<op_kind> { return v[i % v.size()]; };
    };
    using s = start_shape;
    int n = 0;
    const auto put = [&](const std::string& what, const bytes& b) {
        write_file(dir, std::to_string(n / 10) + std::to_string(n % 10) + "-" + what, b);
        ++n;
    };
    // The generator's own mix, from every start shape and pool size.
    for (std::uint8_t pool = 0; pool < 7; ++pool)
        put("mix-pool" + std::to_string(wheel_pools[pool]),
            wheel_seed(pool, wheel_flags(static_cast<s>(pool % 4), true), 0x9e3779b97f4a7c15ULL * (pool + 1), 60,
                       pool + 1, any));
    put("mix-no-removals", wheel_seed(3, wheel_flags(s::near_origin, false), 77, 80, 11, any));
    put("mix-no-removals-top", wheel_seed(4, wheel_flags(s::near_top, false), 1234567, 80, 12, any));
    // Fill, then empty everything at once, then go on in the emptied wheel.
    put("fill-take-all", wheel_seed(3, wheel_flags(s::near_origin, true), 5, 50, 21, fill_then(40, op_kind::take_all)));
    put("fill-rebuild",
        wheel_seed(3, wheel_flags(s::anywhere, true), 0xfedcba9876543210ULL, 50, 22, fill_then(40, op_kind::rebuild)));
    put("fill-take-all-top",
        wheel_seed(2, wheel_flags(s::near_top, true), 99, 40, 23, fill_then(30, op_kind::take_all)));
    put("take-all-often",
        wheel_seed(2, wheel_flags(s::level_boundary, true), 0x1000000000ULL * 7, 60, 24, every(7, op_kind::take_all)));
    put("rebuild-often", wheel_seed(2, wheel_flags(s::anywhere, true), 42, 60, 25, every(9, op_kind::rebuild)));
    // Schedule / advance only: cascades through every level.
    put("schedule-advance", wheel_seed(5, wheel_flags(s::near_origin, true), 0, 80, 31,
                                       cycle({op_kind::schedule, op_kind::schedule, op_kind::advance})));
    put("schedule-advance-boundary", wheel_seed(5, wheel_flags(s::level_boundary, true), 0xabcdef0123456789ULL, 80, 32,
                                                cycle({op_kind::schedule, op_kind::advance})));
    // Pending nodes removed every way: cancel, destruction, reschedule.
    put("one-node-churn", wheel_seed(0, wheel_flags(s::near_origin, true), 3, 60, 41,
                                     cycle({op_kind::schedule, op_kind::schedule, op_kind::cancel, op_kind::schedule,
                                            op_kind::destroy, op_kind::advance})));
    put("three-nodes-churn",
        wheel_seed(1, wheel_flags(s::anywhere, true), 0x7fffffffffffffffULL, 60, 42,
                   cycle({op_kind::schedule, op_kind::advance, op_kind::destroy, op_kind::schedule, op_kind::cancel})));
    // Handed-out nodes left in the expired list, then cancelled, destroyed or run.
    put("expired-list", wheel_seed(2, wheel_flags(s::near_origin, true), 1, 60, 51,
                                   cycle({op_kind::schedule, op_kind::schedule, op_kind::advance, op_kind::cancel,
                                          op_kind::destroy, op_kind::run_expired})));
    // Near the end of the tick range, where deadlines saturate and the top levels fill.
    put("top-of-range", wheel_seed(2, wheel_flags(s::near_top, true), 5, 80, 61, any));
    put("top-of-range-advance", wheel_seed(3, wheel_flags(s::near_top, true), 0, 60, 62,
                                           cycle({op_kind::schedule, op_kind::advance, op_kind::advance})));
    // A few longer mixes (still well under -max_len).
    for (unsigned i = 0; i < 6; ++i)
        put("long-mix-" + std::to_string(i),
            wheel_seed(static_cast<std::uint8_t>(i + 1), wheel_flags(static_cast<s>(i % 4), i != 5), 1000 * i + 17, 300,
                       100 + i, any));
}

// ---- fuzz_idle_watch ----

class idle_script {
public:
    // tick: index in ticks[]; batch: index in batch_limits[]; slots: index in slot_counts[].
    idle_script(std::uint8_t tick, std::uint8_t batch = 0, std::uint8_t slots = 0) : b_{tick, batch, slots} {}

    idle_script& create(std::uint8_t slot, std::uint8_t reader, std::uint8_t writer, std::uint8_t all,
                        bool observe = false, bool start = true) {
        b_.insert(b_.end(), {opcode_of(idle_op::create), slot, reader, writer, all,
                             static_cast<std::uint8_t>((observe ? 1 : 0) | (start ? 2 : 0))});
        return *this;
    }
    idle_script& set_options(std::uint8_t slot, std::uint8_t reader, std::uint8_t writer, std::uint8_t all,
                             bool observe = false) {
        b_.insert(b_.end(), {opcode_of(idle_op::set_options), slot, reader, writer, all,
                             static_cast<std::uint8_t>(observe ? 1 : 0)});
        return *this;
    }
    idle_script& on(idle_op op, std::uint8_t slot) {
        b_.insert(b_.end(), {opcode_of(op), slot});
        return *this;
    }
    idle_script& advance(std::uint8_t amount, unsigned times = 1) {
        for (unsigned i = 0; i < times; ++i) b_.insert(b_.end(), {opcode_of(idle_op::advance), amount});
        return *this;
    }
    idle_script& poll() {
        b_.push_back(opcode_of(idle_op::poll));
        return *this;
    }
    idle_script& handler(std::uint8_t slot, handler_action_kind a, std::uint8_t other = 0, std::uint8_t reader = 0,
                         std::uint8_t writer = 0, std::uint8_t all = 0) {
        b_.insert(b_.end(), {opcode_of(idle_op::handler_action), slot, static_cast<std::uint8_t>(a), other, reader,
                             writer, all, 0});
        return *this;
    }
    [[nodiscard]] const bytes& data() const noexcept { return b_; }

private:
    bytes b_;
};

void write_idle_corpus(const fs::path& dir) {
    using a = handler_action_kind;
    using op = idle_op;
    constexpr std::uint8_t tick1 = advance_ticks(1), tick3 = advance_ticks(3), quarter = advance_quarters(1);
    constexpr std::uint8_t to_boundary = 0x81;  // exactly to the next boundary
    int n = 0;
    const auto put = [&](const std::string& what, const idle_script& s) {
        write_file(dir, std::to_string(n / 10) + std::to_string(n % 10) + "-" + what, s.data());
        ++n;
    };

    // Each kind alone, quiet then active, over several tick sizes (1 ms, 10 ms, 1 us, 1 ns, 7 ns).
    for (const std::uint8_t tick : std::array<std::uint8_t, 5>{0, 1, 2, 3, 6}) {
        const std::string t = "-tick" + std::to_string(tick);
        put("reader" + t, idle_script(tick)
                              .create(0, idle_ticks(3), idle_off(), idle_off())
                              .advance(tick1, 4)
                              .on(op::read, 0)
                              .advance(quarter, 5)
                              .on(op::read, 0)
                              .advance(tick1, 8));
        put("writer" + t, idle_script(tick)
                              .create(0, idle_off(), idle_ticks(2), idle_off())
                              .advance(tick1, 3)
                              .on(op::write, 0)
                              .advance(quarter, 7)
                              .on(op::read, 0)
                              .advance(tick1, 6));
    }
    put("all-alternating", idle_script(0)
                               .create(0, idle_off(), idle_off(), idle_ticks(4))
                               .advance(tick1)
                               .on(op::read, 0)
                               .advance(tick3)
                               .on(op::write, 0)
                               .advance(tick1, 12));
    put("all-three-kinds", idle_script(1)
                               .create(0, idle_ticks(2), idle_ticks(3), idle_ticks(5))
                               .advance(quarter, 9)
                               .on(op::read, 0)
                               .advance(tick1, 4)
                               .on(op::write, 0)
                               .advance(tick1, 10));
    // Long quiet stretches: repeats with first == false, then activity starts a new stretch.
    put("repeats", idle_script(0)
                       .create(0, idle_ticks(2), idle_off(), idle_off())
                       .advance(tick3, 5)
                       .on(op::read, 0)
                       .advance(tick3, 4));
    put("sub-tick-times", idle_script(0).create(0, 0xC0 | 10, 0xC0 | 40, 0xC0 | 63).advance(quarter, 12));
    put("odd-times", idle_script(4)
                         .create(0, 0x80 | 2, 0x80 | 19, 0x80 | 37)
                         .create(1, 0x80 | 52, 0, 0x80 | 5)
                         .advance(quarter, 20)
                         .on(op::read, 1)
                         .advance(quarter, 20));
    // observe_output: progress counts only when observed.
    put("observe-output", idle_script(0)
                              .create(0, idle_off(), idle_ticks(3), idle_off(), true)
                              .advance(tick1, 2)
                              .on(op::write_progress, 0)
                              .advance(tick1, 2)
                              .on(op::write_progress, 0)
                              .advance(tick1, 6));
    put("progress-ignored", idle_script(0)
                                .create(0, idle_off(), idle_ticks(3), idle_ticks(4), false)
                                .advance(tick1, 2)
                                .on(op::write_progress, 0)
                                .advance(tick1, 6));
    put("observe-toggled", idle_script(0)
                               .create(0, idle_off(), idle_ticks(4), idle_ticks(6), true)
                               .advance(tick1)
                               .on(op::write_progress, 0)
                               .set_options(0, 0, idle_ticks(4), idle_ticks(6), false)
                               .advance(tick1, 3)
                               .set_options(0, 0, idle_ticks(4), idle_ticks(6), true)
                               .advance(tick1, 8));
    // Options changed while running: shorter (due at once), longer, off.
    put("set-options-shorter", idle_script(0)
                                   .create(0, idle_ticks(20), idle_off(), idle_off())
                                   .advance(tick3, 2)
                                   .set_options(0, idle_ticks(2), 0, 0)
                                   .advance(quarter, 6));
    put("set-options-longer-off", idle_script(0)
                                      .create(0, idle_ticks(3), idle_ticks(3), idle_off())
                                      .advance(tick1)
                                      .set_options(0, idle_ticks(9), 0, 0)
                                      .advance(tick1, 12));
    put("set-options-before-start", idle_script(2)
                                        .create(0, 0, 0, 0, false, false)
                                        .set_options(0, idle_ticks(2), 0, idle_ticks(5))
                                        .advance(tick1)
                                        .on(op::start, 0)
                                        .advance(tick1, 8));
    // start / stop / reset / destroy from outside.
    put("stop-start", idle_script(0)
                          .create(0, idle_ticks(2), idle_off(), idle_off())
                          .advance(tick1)
                          .on(op::stop, 0)
                          .advance(tick3)
                          .on(op::start, 0)
                          .advance(tick1, 4)
                          .on(op::reset, 0)
                          .advance(tick1, 4));
    put("destroy-pending", idle_script(0)
                               .create(0, idle_ticks(2), 0, 0)
                               .create(1, idle_ticks(2), 0, 0)
                               .advance(tick1)
                               .on(op::destroy, 0)
                               .advance(tick3)
                               .on(op::destroy, 1)
                               .advance(tick3));
    put("activity-at-boundary", idle_script(1)
                                    .create(0, idle_ticks(1), 0, 0)
                                    .advance(to_boundary)
                                    .on(op::read, 0)
                                    .advance(0x80)
                                    .on(op::read, 0)
                                    .advance(0x82)
                                    .on(op::read, 0)
                                    .advance(tick1, 3));
    // What a handler may do inside a report.
    put("handler-stop-self", idle_script(0)
                                 .create(0, idle_ticks(2), idle_ticks(2), idle_ticks(2))
                                 .handler(0, a::stop_self)
                                 .advance(tick1, 5));
    put("handler-destroy-self", idle_script(0)
                                    .create(0, idle_ticks(2), idle_ticks(2), idle_ticks(2))
                                    .handler(0, a::destroy_self)
                                    .advance(tick1, 5));
    put("handler-reset-self",
        idle_script(0).create(0, idle_ticks(2), idle_ticks(3), idle_off()).handler(0, a::reset_self).advance(tick1, 8));
    put("handler-set-options", idle_script(0)
                                   .create(0, idle_ticks(2), idle_ticks(2), idle_ticks(9))
                                   .handler(0, a::set_options_self, 0, idle_ticks(1), 0, idle_ticks(1))
                                   .advance(tick1, 6));
    put("handler-destroy-next", idle_script(0)
                                    .create(0, idle_ticks(2), 0, 0)
                                    .create(1, idle_ticks(2), 0, 0)
                                    .handler(0, a::destroy_other, 1)
                                    .advance(tick1, 4));
    put("handler-stop-next", idle_script(0)
                                 .create(0, idle_ticks(2), 0, 0)
                                 .create(1, idle_ticks(2), 0, 0)
                                 .handler(0, a::stop_other, 1)
                                 .advance(tick1, 4));
    put("handler-start-other", idle_script(0)
                                   .create(0, idle_ticks(2), 0, 0)
                                   .create(1, idle_ticks(1), 0, 0, false, false)
                                   .handler(0, a::start_other, 1)
                                   .advance(tick1, 5));
    put("handler-touch-other", idle_script(0)
                                   .create(0, idle_ticks(2), 0, 0)
                                   .create(1, idle_ticks(2), idle_ticks(2), idle_ticks(2))
                                   .handler(0, a::read_other, 1)
                                   .handler(1, a::write_other, 0)
                                   .advance(tick1, 6));
    // Many watches due in the same tick, with one callback per wake-up (max_run_per_wakeup 1).
    {
        idle_script s(0, 1, 3);
        for (std::uint8_t i = 0; i < 16; ++i) s.create(i, idle_ticks(2), idle_off(), idle_ticks(3));
        s.handler(3, a::destroy_other, 9).handler(5, a::stop_other, 12).advance(tick1, 6);
        put("batch-of-one", s);
    }
    {
        idle_script s(2, 2, 2);
        for (std::uint8_t i = 0; i < 64; ++i) s.create(i, idle_ticks(1 + i % 4), idle_off(), idle_off());
        for (std::uint8_t i = 0; i < 64; i += 3) s.on(op::read, i);
        s.advance(tick1, 6);
        put("sixty-four-watches", s);
    }
    // Regressions: inputs that once found a bug, as scripts.
    // A watch touched, then the last pending entry cancelled: the wheel used to drop the
    // wake-up that stamps the touch, so the write was stamped a whole period late and the
    // writer-idle report came 12 ticks late (fixed in wheel_core::cancel).
    put("regression-lost-sweep", idle_script(2, 1)
                                     .create(0, idle_off(), idle_off(), idle_ticks(5))
                                     .create(1, idle_ticks(35), idle_ticks(12), idle_off(), true, false)
                                     .on(op::read, 1)
                                     .on(op::stop, 0)
                                     .on(op::reset, 1)
                                     .on(op::write, 1)
                                     .advance(advance_ticks(8), 3));
    // A handler reads on its own watch; the batch is split (max_run_per_wakeup 2), so the
    // continuation of the same instant stamped that read with the report's own time, and the
    // next report said first == false though data came in between (fixed in idle_watch).
    put("regression-first-after-callback-read", idle_script(2, 2)
                                                    .create(0, idle_ticks(1), idle_off(), idle_ticks(3))
                                                    .create(1, idle_ticks(1), 0, 0)
                                                    .create(2, idle_ticks(1), 0, 0)
                                                    .handler(0, a::read_other, 0)
                                                    .advance(tick1, 3));
    // Random scripts: any bytes are a valid input.
    std::mt19937 random(2026);
    for (int i = 0; i < 4; ++i) {
        idle_script s(static_cast<std::uint8_t>(i));
        bytes extra(200);
        for (auto& byte : extra) byte = static_cast<std::uint8_t>(random());
        bytes b = s.data();
        b.insert(b.end(), extra.begin(), extra.end());
        write_file(dir, std::to_string(n / 10) + std::to_string(n % 10) + "-random-" + std::to_string(i), b);
        ++n;
    }
    // Full wheels (slots byte: bits 2-3 pick max_pending 1, 3 or 8): a handler takes the last
    // places while its watch's entry is out of the wheel; running watches keep reporting (their
    // re-arms never count), new starts are refused, releasing makes room again.
    for (const std::uint8_t limit : std::array<std::uint8_t, 3>{1, 2, 3}) {
        const auto slots = static_cast<std::uint8_t>(limit << 2);
        const std::string l = "-limit" + std::to_string(pending_limits[limit]);
        put("full-wheel-keeps-reporting" + l, idle_script(1, 0, slots)
                                                  .create(0, idle_ticks(2), idle_off(), idle_off())
                                                  .create(1, idle_off(), idle_ticks(3), idle_off())
                                                  .handler(0, a::fill_wheel)
                                                  .advance(tick1, 3)
                                                  .create(2, idle_ticks(1), idle_off(), idle_off())
                                                  .handler(1, a::start_other, 3)
                                                  .create(3, idle_ticks(2), idle_off(), idle_off(), false, false)
                                                  .advance(tick3, 3)
                                                  .handler(0, a::release)
                                                  .advance(tick1, 3)
                                                  .on(op::start, 3)
                                                  .advance(tick3, 2));
        put("full-wheel-own-handler" + l, idle_script(1, 0, slots)
                                              .create(0, idle_ticks(2), idle_off(), idle_off())
                                              .handler(0, a::fill_wheel)
                                              .advance(tick1, 3)
                                              .handler(0, a::set_options_self, 0, idle_ticks(3), idle_ticks(1))
                                              .advance(tick1, 4)
                                              .handler(0, a::reset_self)
                                              .advance(tick1, 4));
    }
}


// ---- fuzz_wheel_timer ----

class timer_script {
public:
    timer_script(bool per_tick, wt::start origin, std::uint8_t tick, std::uint8_t max_pending, std::uint8_t run_bound) {
        b_ = {static_cast<std::uint8_t>((per_tick ? 1U : 0U) | (static_cast<unsigned>(origin) << 1)), tick, max_pending,
              run_bound};
    }
    // Delays: [type] [shape] [operands].
    static bytes ticks(unsigned type, unsigned quarters, unsigned mode = 1) {
        return {static_cast<std::uint8_t>(type), static_cast<std::uint8_t>(quarters & 127U), static_cast<std::uint8_t>(mode)};
    }
    static bytes extreme(unsigned type, unsigned which) {
        return {static_cast<std::uint8_t>(type), static_cast<std::uint8_t>(0x80U | which)};
    }
    static bytes raw(unsigned type, std::uint64_t count) {
        bytes b{static_cast<std::uint8_t>(type), 0xC0};
        put_u64(b, count);
        return b;
    }
    // Behaviours: [kind] [operand] [delay, for spawn / fill / reschedule_node].
    static bytes plain() { return {0, 0}; }
    static bytes does(wt::behaviour k, unsigned operand = 0, const bytes& child = ticks(0, 4)) {
        bytes b{wt::behaviour_byte(k), static_cast<std::uint8_t>(operand)};
        if (k == wt::behaviour::spawn || k == wt::behaviour::fill || k == wt::behaviour::reschedule_node)
            b.insert(b.end(), child.begin(), child.end());
        return b;
    }

    timer_script& schedule(unsigned slot, const bytes& delay, const bytes& behaviour = plain()) {
        return op(wt::op::schedule, {static_cast<std::uint8_t>(slot)}, delay, behaviour);
    }
    timer_script& node(unsigned slot, const bytes& delay, const bytes& behaviour = plain()) {
        return op(wt::op::schedule_node, {static_cast<std::uint8_t>(slot)}, delay, behaviour);
    }
    timer_script& at(unsigned slot, wt::when w, std::uint8_t operand = 0, const bytes& behaviour = plain()) {
        bytes when{static_cast<std::uint8_t>(w), operand};
        if (w == wt::when::raw) put_u64(when, 0x7FFFFFFFFFFFFF00ULL);
        return op(wt::op::schedule_at, {static_cast<std::uint8_t>(slot)}, when, behaviour);
    }
    timer_script& wait(unsigned slot, const bytes& delay, const bytes& behaviour = plain()) {
        return op(wt::op::async_wait, {static_cast<std::uint8_t>(slot)}, delay, behaviour);
    }
    timer_script& cancel(unsigned what, unsigned slot) {
        return op(wt::op::cancel, {static_cast<std::uint8_t>(what), static_cast<std::uint8_t>(slot)}, {}, {});
    }
    timer_script& advance(std::uint8_t amount, int times = 1) {
        for (int i = 0; i < times; ++i) op(wt::op::advance, {amount}, {}, {});
        return *this;
    }
    timer_script& to_due(unsigned index, unsigned offset) {
        return op(wt::op::advance_to_due, {static_cast<std::uint8_t>(index), static_cast<std::uint8_t>(offset)}, {}, {});
    }
    timer_script& just(wt::op o) { return op(o, {}, {}, {}); }
    [[nodiscard]] const bytes& data() const noexcept { return b_; }

private:
    timer_script& op(wt::op o, const bytes& a, const bytes& b, const bytes& c) {
        b_.push_back(wt::opcode_of(o));
        for (const bytes* part : {&a, &b, &c}) b_.insert(b_.end(), part->begin(), part->end());
        return *this;
    }
    bytes b_;
};

void write_wheel_timer_corpus(const fs::path& dir) {
    using wt::behaviour;
    using wt::op;
    using wt::start;
    using wt::when;
    using ts = timer_script;
    int n = 0;
    const auto put = [&](const std::string& what, const timer_script& s) {
        write_file(dir, std::to_string(n / 10) + std::to_string(n % 10) + "-" + what, s.data());
        ++n;
    };
    const std::uint8_t tick1 = wt::advance_ticks(1), tick8 = wt::advance_ticks(8);

    for (const bool per_tick : {false, true}) {
        const std::string mode = per_tick ? "-per-tick" : "";
        // Every delay type at ordinary sizes: a few ticks, rounded each way.
        for (unsigned type = 0; type < wt::delay_type_count; ++type) {
            ts s(per_tick, start::one_hour, static_cast<std::uint8_t>(type % 2 == 0 ? 1 : 4), 0, 0);
            s.advance(0x10);  // off a tick boundary
            for (unsigned mode_byte = 0; mode_byte < 4; ++mode_byte)
                s.schedule(mode_byte, ts::ticks(type, 3 + 5 * mode_byte, mode_byte));
            s.node(0, ts::ticks(type, 9, 3)).wait(0, ts::ticks(type, 6, 2)).advance(tick8, 4);
            put("type" + std::to_string(type) + mode, s);
        }
        // Every extreme of every type: saturated, never early, never wrapped to "now".
        for (unsigned type = 0; type < wt::delay_type_count; ++type) {
            ts s(per_tick, start::one_hour, 2, 0, 0);  // 1 ns ticks
            for (unsigned which = 0; which < wt::extreme_count; ++which)
                which % 3 == 2 ? s.wait(which % 8, ts::extreme(type, which)) : s.schedule(which % 8, ts::extreme(type, which));
            s.advance(tick8, 2).advance(wt::advance_jump(40)).to_due(0, 1).to_due(1, 0).just(op::stop);
            put("extremes-type" + std::to_string(type) + mode, s);
        }
        // 5e9 s in thirds of a second: representable in nanoseconds, overflows std::chrono::ceil.
        put("odd-period-huge" + mode, ts(per_tick, start::one_hour, 0, 0, 0)
                                          .schedule(0, ts::raw(1, 15'000'000'000ULL))
                                          .node(1, ts::raw(1, 15'000'000'000ULL))
                                          .wait(2, ts::raw(12, 4'000'000'000'000'000'000ULL))
                                          .advance(tick8, 3)
                                          .advance(wt::advance_jump(47), 3)
                                          .to_due(0, 0));
        // A double that long double rounds down onto a whole nanosecond (1.001528003... s).
        put("double-rounding" + mode, ts(per_tick, start::one_hour, 2, 0, 0)
                                          .schedule(0, ts::raw(3, 0x3FF006423A2E9C6DULL))
                                          .node(0, ts::raw(3, 0x3FF00484745D38DAULL))
                                          .wait(0, ts::raw(3, 0x3FF002C6AE8BD547ULL))
                                          .to_due(0, 0)
                                          .to_due(0, 0)
                                          .to_due(0, 0)
                                          .advance(tick1, 2));
        // Absolute times at the limits, from every start of the clock.
        for (const start origin : {start::one_hour, start::epoch, start::near_max, start::one_day}) {
            ts s(per_tick, origin, static_cast<std::uint8_t>(static_cast<unsigned>(origin) * 2), 0, 0);
            s.advance(0x21);
            for (unsigned w = 0; w < static_cast<unsigned>(when::count); ++w) s.at(w % 8, static_cast<when>(w), 5);
            s.advance(tick1, 3).advance(wt::advance_jump(30)).to_due(0, 3);
            put("absolute-limits-start" + std::to_string(static_cast<unsigned>(origin)) + mode, s);
        }
        // Full wheels: callbacks that fill it, moves of pending nodes (never counted), refused waits.
        for (const std::uint8_t max_pending : std::array<std::uint8_t, 4>{1, 2, 3, 6}) {
            put("full-" + std::to_string(wt::max_pendings[max_pending]) + mode,
                ts(per_tick, start::one_hour, 1, max_pending, 0)
                    .node(0, ts::ticks(0, 8))
                    .schedule(0, ts::ticks(5, 4), ts::does(behaviour::fill, 0, ts::ticks(10, 12)))
                    .advance(tick1, 2)
                    .node(0, ts::ticks(0, 20))
                    .node(1, ts::ticks(0, 4))
                    .wait(0, ts::ticks(0, 4), ts::does(behaviour::spawn, 0, ts::ticks(3, 8)))
                    .schedule(1, ts::ticks(0, 1))
                    .advance(tick8, 3)
                    .cancel(0, 0)
                    .schedule(2, ts::ticks(7, 1), ts::does(behaviour::reschedule_node, 0, ts::ticks(0, 4)))
                    .advance(tick8, 2));
        }
        // Throwing callbacks and wait handlers of one wake-up, batches split by the run bound.
        for (const std::uint8_t run_bound : std::array<std::uint8_t, 3>{0, 1, 2}) {
            put("throwing-bound" + std::to_string(run_bound) + mode,
                ts(per_tick, start::one_hour, 0, 0, run_bound)
                    .schedule(0, ts::ticks(0, 4), ts::does(behaviour::throws))
                    .wait(0, ts::ticks(0, 4), ts::does(behaviour::throws))
                    .wait(1, ts::ticks(0, 4), ts::does(behaviour::throws))
                    .node(0, ts::ticks(0, 4), ts::does(behaviour::throws))
                    .schedule(1, ts::ticks(0, 4))
                    .schedule(2, ts::ticks(0, 4), ts::does(behaviour::spawn, 0, ts::ticks(0, 0)))
                    .advance(tick1, 3)
                    .schedule(3, ts::ticks(0, 40), ts::does(behaviour::throws))
                    .wait(2, ts::ticks(0, 40), ts::does(behaviour::throws))
                    .schedule(4, ts::ticks(0, 50), ts::does(behaviour::throws))
                    .just(op::expire_all)
                    .advance(tick1, 2));
        }
        // expire_all from inside a callback, stop from inside, and stop with everything pending.
        put("inside-expire-all-and-stop" + mode, ts(per_tick, start::one_hour, 0, 0, 1)
                                                     .schedule(0, ts::ticks(0, 4), ts::does(behaviour::expire_all))
                                                     .schedule(1, ts::ticks(7, 2))
                                                     .node(0, ts::ticks(0, 20))
                                                     .wait(0, ts::ticks(0, 30))
                                                     .advance(tick1, 2)
                                                     .schedule(2, ts::ticks(0, 4), ts::does(behaviour::stop))
                                                     .schedule(3, ts::ticks(0, 8))
                                                     .node(1, ts::ticks(0, 8))
                                                     .wait(1, ts::ticks(0, 8))
                                                     .advance(tick1, 3)
                                                     .schedule(4, ts::ticks(0, 1))
                                                     .wait(2, ts::ticks(0, 1))
                                                     .advance(tick1, 1));
        // The switch: on with timeouts pending, new ones while on (from callbacks too), off.
        put("switch" + mode, ts(per_tick, start::one_hour, 0, 0, 0)
                                 .schedule(0, ts::extreme(7, 0))
                                 .node(0, ts::ticks(0, 100))
                                 .wait(0, ts::ticks(0, 60))
                                 .advance(0x0d)
                                 .just(op::toggle_switch)
                                 .advance(tick1, 2)
                                 .schedule(1, ts::ticks(8, 1), ts::does(behaviour::spawn, 0, ts::extreme(3, 1)))
                                 .at(1, when::max)
                                 .wait(1, ts::extreme(0, 0))
                                 .advance(tick1, 3)
                                 .just(op::toggle_switch)
                                 .schedule(2, ts::ticks(0, 40))
                                 .advance(tick8, 2));
        // Cancellation of each kind, and destroying a pending node.
        put("cancel" + mode, ts(per_tick, start::one_hour, 1, 0, 0)
                                 .schedule(0, ts::ticks(0, 8))
                                 .node(0, ts::ticks(0, 8))
                                 .wait(0, ts::ticks(0, 8))
                                 .node(1, ts::ticks(0, 8))
                                 .cancel(0, 0)
                                 .cancel(1, 0)
                                 .cancel(2, 0)
                                 .just(op::destroy_node)
                                 .advance(tick1, 4));
    }
    // Random scripts: any bytes are a valid input.
    std::mt19937 random(2027);
    for (int i = 0; i < 4; ++i) {
        bytes b(300);
        for (auto& byte : b) byte = static_cast<std::uint8_t>(random());
        write_file(dir, std::to_string(n / 10) + std::to_string(n % 10) + "-random-" + std::to_string(i), b);
        ++n;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_corpus <corpus dir>\n");
        return 2;
    }
    const fs::path root(argv[1]);
    write_wheel_corpus(root / "fuzz_wheel");
    write_idle_corpus(root / "fuzz_idle_watch");
    write_wheel_timer_corpus(root / "fuzz_wheel_timer");
    std::printf("make_corpus: wrote %s/fuzz_wheel, %s/fuzz_idle_watch and %s/fuzz_wheel_timer\n", root.c_str(), root.c_str(),
                root.c_str());
    return 0;
}
