// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_TESTS_FUZZ_IDLE_WATCH_INPUT_HPP
#define IDLEWHEEL_TESTS_FUZZ_IDLE_WATCH_INPUT_HPP

// The input format of fuzz_idle_watch, shared with make_corpus (which writes seed inputs).
//
//   header:    [tick] [batch] [slots]       slots: bits 0-1 how many watches, bits 2-3 the
//                                           wheel's max_pending (pending_limits)
//   operation: [opcode] [operands...]           repeated until the input ends
//
//   create          slot, reader, writer, all, flags   flags: bit 0 observe_output, bit 1 start
//   destroy         slot
//   start, reset    slot
//   stop            slot
//   set_options     slot, reader, writer, all, flags   flags: bit 0 observe_output
//   read, write,    slot                               on_read / on_write / on_write_progress
//   write_progress
//   advance         amount                             moves the clock, polling at every tick
//   poll                                               boundary it crosses and at the end
//   handler_action  slot, action, other slot, reader, writer, all, flags
//                                                      what the slot's handler does (once) in
//                                                      its next report
//
// Every byte value is valid: an opcode is looked up in a table (modulo its size) that weights
// the common operations, a slot is taken modulo the number of slots, and each time or amount
// is decoded relative to the wheel's tick so that every tick size sees the same shapes.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace idlewheel::fuzz {

using ns = std::chrono::nanoseconds;

// Header choices.
inline constexpr std::array<ns, 8> ticks{std::chrono::milliseconds(1),
                                         std::chrono::milliseconds(10),
                                         std::chrono::microseconds(1),
                                         ns(1),
                                         std::chrono::milliseconds(3),
                                         ns(100),
                                         ns(7),
                                         std::chrono::microseconds(333)};
inline constexpr std::array<std::size_t, 4> batch_limits{4096, 1, 2, 3};  // max_run_per_wakeup
inline constexpr std::array<unsigned, 4> slot_counts{8, 2, 64, 16};       // watches at most
inline constexpr std::array<std::size_t, 4> pending_limits{0, 1, 3, 8};   // max_pending (0: none)

enum class idle_op : std::uint8_t {
    create,
    destroy,
    start,
    reset,
    stop,
    set_options,
    read,
    write,
    write_progress,
    advance,
    poll,
    handler_action,
};

inline constexpr std::array<idle_op, 32> opcodes{
    idle_op::create,         idle_op::create,         idle_op::create,      idle_op::destroy,
    idle_op::start,          idle_op::start,          idle_op::reset,       idle_op::stop,
    idle_op::set_options,    idle_op::read,           idle_op::read,        idle_op::read,
    idle_op::read,           idle_op::write,          idle_op::write,       idle_op::write,
    idle_op::write_progress, idle_op::write_progress, idle_op::advance,     idle_op::advance,
    idle_op::advance,        idle_op::advance,        idle_op::advance,     idle_op::advance,
    idle_op::advance,        idle_op::advance,        idle_op::advance,     idle_op::poll,
    idle_op::handler_action, idle_op::handler_action, idle_op::set_options, idle_op::stop,
};

[[nodiscard]] constexpr idle_op decode_op(std::uint8_t b) noexcept { return opcodes[b % opcodes.size()]; }

// The first opcode byte that means `op`.
[[nodiscard]] constexpr std::uint8_t opcode_of(idle_op op) noexcept {
    for (std::size_t i = 0; i < opcodes.size(); ++i)
        if (opcodes[i] == op) return static_cast<std::uint8_t>(i);
    return 0;
}

// What a handler does inside its next report.
enum class handler_action_kind : std::uint8_t {
    none,
    stop_self,
    destroy_self,
    reset_self,
    set_options_self,
    stop_other,
    destroy_other,
    start_other,
    read_other,   // on_read() of another watch (or itself) from inside a report
    write_other,  // on_write()
    fill_wheel,   // schedules 1 h timeouts until the wheel refuses one (max_pending)
    release,      // cancels those timeouts
    count
};

[[nodiscard]] constexpr handler_action_kind decode_action(std::uint8_t b) noexcept {
    return static_cast<handler_action_kind>(b % static_cast<unsigned>(handler_action_kind::count));
}

// An idle time: top two bits pick a shape, the low six a size.
//   00vvvvvv  off
//   01vvvvvv  v + 1 whole ticks (1 to 64)
//   10vvvvvv  (v % 16 + 1) ticks, then -1 ns, +1 ns, +half a tick or -a third of a tick
//   11vvvvvv  (v + 1) / 64 of a tick (at least 1 ns): reported again every tick
[[nodiscard]] constexpr ns decode_idle_time(std::uint8_t b, ns tick) noexcept {
    const unsigned v = b & 63U;
    ns t{0};
    switch (b >> 6) {
        case 0:
            return ns(0);
        case 1:
            t = tick * (v + 1);
            break;
        case 2: {
            const ns base = tick * (v % 16 + 1);
            switch (v / 16) {
                case 0:
                    t = base - ns(1);
                    break;
                case 1:
                    t = base + ns(1);
                    break;
                case 2:
                    t = base + tick / 2;
                    break;
                default:
                    t = base - tick / 3;
                    break;
            }
            break;
        }
        default:
            t = tick * (v + 1) / 64;
            break;
    }
    return t < ns(1) ? ns(1) : t;
}

[[nodiscard]] constexpr std::uint8_t idle_off() noexcept { return 0; }
[[nodiscard]] constexpr std::uint8_t idle_ticks(unsigned n) noexcept {  // n in 1..64
    return static_cast<std::uint8_t>(0x40U | ((n - 1) & 63U));
}

// A clock advance: top two bits pick a shape, the low six a size.
//   00vvvvvv  v / 64 of a tick (0: just a poll)
//   01vvvvvv  v % 8 + 1 whole ticks
//   10vvvvvv  to the next tick boundary, then -1 ns, exactly, or +1 ns
//   11vvvvvv  (v + 1) quarters of a tick
[[nodiscard]] constexpr ns decode_advance(std::uint8_t b, ns tick, ns to_boundary) noexcept {
    const unsigned v = b & 63U;
    switch (b >> 6) {
        case 0:
            return tick * v / 64;
        case 1:
            return tick * (v % 8 + 1);
        case 2: {
            const ns d = to_boundary + ns(static_cast<int>(v % 3) - 1);
            return d < ns(0) ? ns(0) : d;
        }
        default:
            return tick * (v + 1) / 4;
    }
}

[[nodiscard]] constexpr std::uint8_t advance_ticks(unsigned n) noexcept {  // n in 1..8
    return static_cast<std::uint8_t>(0x40U | ((n - 1) & 7U));
}
[[nodiscard]] constexpr std::uint8_t advance_quarters(unsigned n) noexcept {  // n in 1..64
    return static_cast<std::uint8_t>(0xC0U | ((n - 1) & 63U));
}

}  // namespace idlewheel::fuzz

#endif
