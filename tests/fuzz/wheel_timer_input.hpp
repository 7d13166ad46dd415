// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_FUZZ_WHEEL_TIMER_INPUT_HPP
#define IDLEWHEEL_TESTS_FUZZ_WHEEL_TIMER_INPUT_HPP

// The input format of fuzz_wheel_timer, shared with make_corpus (which writes seed inputs).
//
//   header:    [flags] [tick] [max_pending] [max_run_per_wakeup]
//              flags: bit 0 clock_read::per_tick; bits 1-2 where the clock starts
//   operation: [opcode] [operands...]           repeated until the input ends
//
//   schedule       slot, delay, behaviour        a handle (schedule(delay, fn)) kept in slot
//   schedule_node  slot, delay, behaviour        (re)schedules timer_node `slot`
//   schedule_at    slot, when, behaviour         schedule_at(node `slot`, absolute time)
//   async_wait     slot, delay, behaviour        cancellable through signal `slot` when free
//   cancel         what, slot                    a handle, a node, or a wait (signal emit)
//   destroy_node   slot                          destroys (and recreates) node `slot`
//   advance        amount                        moves the clock (see decode_advance)
//   advance_to_due index, offset                 jumps to a pending timeout's due time +-
//   poll, expire_all, stop, toggle_switch        (toggle: set_expire_immediately(!on))
//
//   delay:     [type] [shape] [operands]          the chrono type (delay_types) and a count
//   behaviour: [kind] [operand] [delay if spawn]  what the callback / wait handler does
//
// Every byte value is valid (tables are indexed modulo their size); reads past the end are 0.

#include "fuzz_input.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ratio>

namespace idlewheel::fuzz::wt {

using ns = std::chrono::nanoseconds;

inline constexpr std::array<ns, 8> ticks{
    std::chrono::milliseconds(10),  std::chrono::milliseconds(1), ns(1),  ns(7), std::chrono::milliseconds(3),
    std::chrono::microseconds(333), std::chrono::seconds(1),      ns(100)};
inline constexpr std::array<std::size_t, 8> max_pendings{0, 1, 2, 3, 5, 8, 16, 64};
inline constexpr std::array<std::size_t, 4> run_bounds{4096, 1, 2, 3};

enum class start : std::uint8_t { one_hour, epoch, near_max, one_day };

// The chrono types delays come in: odd periods, narrow, unsigned and floating-point reps.
using delay_types = std::tuple<std::chrono::nanoseconds,                                             // 0
                               std::chrono::duration<std::int64_t, std::ratio<1, 3>>,                // 1
                               std::chrono::duration<std::int32_t, std::ratio<1, 7000>>,             // 2
                               std::chrono::duration<double>,                                        // 3
                               std::chrono::duration<float, std::milli>,                             // 4
                               std::chrono::duration<std::uint64_t, std::milli>,                     // 5
                               std::chrono::duration<std::uint8_t>,                                  // 6
                               std::chrono::hours,                                                   // 7
                               std::chrono::years,                                                   // 8
                               std::chrono::duration<std::int16_t, std::milli>,                      // 9
                               std::chrono::microseconds,                                            // 10
                               std::chrono::duration<double, std::micro>,                            // 11
                               std::chrono::duration<std::int64_t, std::ratio<7, 3>>,                // 12
                               std::chrono::duration<std::uint32_t, std::ratio<1, 3'000'000'000>>>;  // 13
inline constexpr unsigned delay_type_count = std::tuple_size_v<delay_types>;

// A delay's shape (the byte after its type):
//   00vvvvvv, 01vvvvvv  about v/4 ticks (0 to 16), then rounded down, up, -1 or +1 unit
//                       (bits of the next byte): the delays a server uses, in every unit
//   10vvvvvv            an extreme of the type (v % extreme_count): max, min, 0, -1, 1, lowest;
//                       floating: NaN, +-inf, +-1e300, tiny, denormal, 2^63 ns, 2^63 ns - a bit
//   11vvvvvv            8 raw bytes: the count (integers: truncated; floating: the bits)
inline constexpr unsigned extreme_count = 14;

enum class op : std::uint8_t {
    schedule,
    schedule_node,
    schedule_at,
    async_wait,
    cancel,
    destroy_node,
    advance,
    advance_to_due,
    poll,
    expire_all,
    stop,
    toggle_switch,
};

inline constexpr std::array<op, 32> opcodes{
    op::schedule,    op::schedule,       op::schedule,     op::schedule_node, op::schedule_node,  op::schedule_node,
    op::schedule_at, op::schedule_at,    op::async_wait,   op::async_wait,    op::async_wait,     op::cancel,
    op::cancel,      op::cancel,         op::destroy_node, op::advance,       op::advance,        op::advance,
    op::advance,     op::advance,        op::advance,      op::advance,       op::advance_to_due, op::advance_to_due,
    op::poll,        op::expire_all,     op::stop,         op::toggle_switch, op::toggle_switch,  op::schedule,
    op::advance,     op::advance_to_due,
};

[[nodiscard]] constexpr op decode_op(std::uint8_t b) noexcept { return opcodes[b % opcodes.size()]; }

[[nodiscard]] constexpr std::uint8_t opcode_of(op o) noexcept {
    for (std::size_t i = 0; i < opcodes.size(); ++i)
        if (opcodes[i] == o) return static_cast<std::uint8_t>(i);
    return 0;
}

inline constexpr unsigned slot_count = 8;

// What a callback (or a wait handler: none, throws, spawn only) does when it runs.
enum class behaviour : std::uint8_t {
    none,
    throws,           // throws a fuzz exception of its own (it must leave poll() exactly once)
    spawn,            // schedules one more handle, with the delay that follows
    fill,             // schedules handles until the wheel refuses (max_pending)
    cancel_handle,    // cancels handle slot `operand`
    reschedule_node,  // schedules node slot `operand` again, with the delay that follows
    expire_all,       // expire_all() from inside
    stop,             // stop() from inside
    destroy_node,     // destroys node slot `operand` (possibly its own)
    count
};

// Behaviours weighted towards the plain case.
[[nodiscard]] constexpr behaviour decode_behaviour(std::uint8_t b) noexcept {
    const unsigned v = b % 16;
    return v < 7 ? behaviour::none
                 : static_cast<behaviour>(v - 6 < static_cast<unsigned>(behaviour::count) ? v - 6 : 1);
}

// The first behaviour byte that means `k`.
[[nodiscard]] constexpr std::uint8_t behaviour_byte(behaviour k) noexcept {
    for (unsigned b = 0; b < 16; ++b)
        if (decode_behaviour(static_cast<std::uint8_t>(b)) == k) return static_cast<std::uint8_t>(b);
    return 0;
}

// Absolute times (schedule_at), the byte after the slot:
enum class when : std::uint8_t {
    min,
    max,
    max_minus_1ns,
    epoch,
    now,
    now_minus_1ns,
    now_plus_1ns,
    origin,
    origin_minus_1ns,
    next_boundary,
    quarter_ticks_ahead,  // operand: v/4 ticks ahead
    ticks_behind,         // operand: v ticks behind
    raw,                  // 8 bytes
    power_of_two_ahead,   // operand: 2^(v % 63) ns ahead
    min_plus_1ns,
    count
};

// Clock advances:
//   00vvvvvv  v / 64 of a tick (0: just a poll)
//   01vvvvvv  v % 8 + 1 whole ticks, polling at every boundary
//   10vvvvvv  to the next tick boundary, then -1 ns, exactly, or +1 ns
//   11vvvvvv  a jump of 2^(v % 48) ns with one poll at its end (a late io_context)
[[nodiscard]] constexpr std::uint8_t advance_ticks(unsigned n) noexcept {
    return static_cast<std::uint8_t>(0x40U | ((n - 1) & 7U));
}
[[nodiscard]] constexpr std::uint8_t advance_jump(unsigned log2) noexcept {
    return static_cast<std::uint8_t>(0xC0U | (log2 & 63U));
}

}  // namespace idlewheel::fuzz::wt

#endif
