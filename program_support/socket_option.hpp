// An int-valued socket option of Asio's SettableSocketOption requirements (level, name, data
// and size for a protocol), for the options Asio has no type for: TCP_NOTSENT_LOWAT (the demo
// server), IP_BIND_ADDRESS_NO_PORT (loadgen). Asio's own such template is in its detail/
// namespace; this one is ours, 20 lines.
//
//     socket.set_option(program_support::int_socket_option<IPPROTO_TCP, TCP_NOTSENT_LOWAT>(16 * 1024), ec);
#ifndef IDLEWHEEL_PROGRAM_SUPPORT_SOCKET_OPTION_HPP
#define IDLEWHEEL_PROGRAM_SUPPORT_SOCKET_OPTION_HPP

#include <cstddef>

namespace program_support {

/// setsockopt(Level, Name) with an int (a boolean option takes 0 or 1).
template <int Level, int Name>
class int_socket_option {
public:
    explicit constexpr int_socket_option(int value) noexcept : value_(value) {}

    [[nodiscard]] constexpr int value() const noexcept { return value_; }

    template <class Protocol>
    [[nodiscard]] int level(const Protocol&) const noexcept { return Level; }
    template <class Protocol>
    [[nodiscard]] int name(const Protocol&) const noexcept { return Name; }
    template <class Protocol>
    [[nodiscard]] const int* data(const Protocol&) const noexcept { return &value_; }
    template <class Protocol>
    [[nodiscard]] std::size_t size(const Protocol&) const noexcept { return sizeof(value_); }

private:
    int value_;
};

}  // namespace program_support

#endif
