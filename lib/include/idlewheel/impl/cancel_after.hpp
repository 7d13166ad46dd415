// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_IMPL_CANCEL_AFTER_HPP
#define IDLEWHEEL_IMPL_CANCEL_AFTER_HPP

// The async_result specialisations that make cancel_deadline_t and partial_cancel_deadline
// completion tokens: the initiation is wrapped so that it gets the adapter's handler (whose
// slot is the deadline's signal), and the wrapped token's own async_result decides what the
// initiating function returns (an awaitable, a deferred operation, a future, void).
// Written against the async_result/async_initiate of Asio 1.22 / Boost 1.81, which have no
// cancel_after of their own.

#include <idlewheel/detail/asio.hpp>
#include <idlewheel/detail/cancel_after_op.hpp>

#include <type_traits>
#include <utility>

namespace idlewheel::detail {

// The initiation's executor, for operations and tokens that ask it (a partial token's
// default completion token, for one).
template <class Initiation, class = void>
struct initiation_executor_base {
    explicit initiation_executor_base(Initiation&& i) : initiation_(std::move(i)) {}
    explicit initiation_executor_base(const Initiation& i) : initiation_(i) {}
    Initiation initiation_;
};

template <class Initiation>
struct initiation_executor_base<Initiation, std::void_t<typename Initiation::executor_type>> {
    using executor_type = typename Initiation::executor_type;
    explicit initiation_executor_base(Initiation&& i) : initiation_(std::move(i)) {}
    explicit initiation_executor_base(const Initiation& i) : initiation_(i) {}
    executor_type get_executor() const noexcept { return initiation_.get_executor(); }
    Initiation initiation_;
};

template <class Initiation, class Wheel, class Deadline, class... Signatures>
struct initiate_cancel_deadline : initiation_executor_base<Initiation> {
    using initiation_executor_base<Initiation>::initiation_executor_base;

    template <class Handler, class... Args>
    void operator()(Handler&& handler, Wheel* wheel, const Deadline& deadline, net::cancellation_type_t type,
                    Args&&... args) && {
        start(std::forward<Handler>(handler), *wheel, deadline, type, std::move(this->initiation_),
              std::forward<Args>(args)...);
    }

    template <class Handler, class... Args>
    void operator()(Handler&& handler, Wheel* wheel, const Deadline& deadline, net::cancellation_type_t type,
                    Args&&... args) const& {
        start(std::forward<Handler>(handler), *wheel, deadline, type, this->initiation_, std::forward<Args>(args)...);
    }

private:
    template <class Handler, class Init, class... Args>
    static void start(Handler&& handler, Wheel& wheel, const Deadline& deadline, net::cancellation_type_t type,
                      Init&& initiation, Args&&... args) {
        using op = cancel_after_op<std::decay_t<Handler>, Wheel, Signatures...>;
        std::decay_t<Handler> h(std::forward<Handler>(handler));
        op::create(h, type, wheel)->start(wheel, deadline, std::forward<Init>(initiation), std::forward<Args>(args)...);
    }
};

template <class Token, class RawToken>
using maybe_const_token = std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>, const Token, Token>;

}  // namespace idlewheel::detail

template <class CompletionToken, class Wheel, class Deadline, class... Signatures>
struct idlewheel::net::async_result<idlewheel::cancel_deadline_t<CompletionToken, Wheel, Deadline>, Signatures...>
    : idlewheel::net::async_result<CompletionToken, Signatures...> {
    template <class Initiation, class RawCompletionToken, class... Args>
    static auto initiate(Initiation&& initiation, RawCompletionToken&& token, Args&&... args)
        -> decltype(idlewheel::net::async_initiate<
                    idlewheel::detail::maybe_const_token<CompletionToken, RawCompletionToken>, Signatures...>(
            std::declval<idlewheel::detail::initiate_cancel_deadline<std::decay_t<Initiation>, Wheel, Deadline,
                                                                     Signatures...>>(),
            token.token_, token.wheel_, token.deadline_, token.cancel_type_, std::forward<Args>(args)...)) {
        return idlewheel::net::async_initiate<idlewheel::detail::maybe_const_token<CompletionToken, RawCompletionToken>,
                                              Signatures...>(
            idlewheel::detail::initiate_cancel_deadline<std::decay_t<Initiation>, Wheel, Deadline, Signatures...>(
                std::forward<Initiation>(initiation)),
            token.token_, token.wheel_, token.deadline_, token.cancel_type_, std::forward<Args>(args)...);
    }
};

template <class Wheel, class Deadline, class... Signatures>
struct idlewheel::net::async_result<idlewheel::partial_cancel_deadline<Wheel, Deadline>, Signatures...> {
    template <class Initiation>
    using default_token =
        idlewheel::net::default_completion_token_t<idlewheel::net::associated_executor_t<std::decay_t<Initiation>>>;

    // An executor without a default completion token (Asio's own archetype, used by the
    // completion_token_for concept, is one): the form is accepted by the concept, and a real
    // use fails to compile with a message.
    template <class Initiation, class RawCompletionToken,
              std::enable_if_t<std::is_void_v<default_token<Initiation>>, int> = 0, class... Args>
    static void initiate(Initiation&&, RawCompletionToken&&, Args&&...) {
        static_assert(!std::is_void_v<default_token<Initiation>>,
                      "idlewheel::cancel_after(wheel, d) / cancel_at(wheel, t) without a completion token needs an "
                      "operation whose I/O executor names a default completion token; pass a token instead");
    }

    template <class Initiation, class RawCompletionToken,
              std::enable_if_t<!std::is_void_v<default_token<Initiation>>, int> = 0, class... Args>
    static auto initiate(Initiation&& initiation, RawCompletionToken&& token, Args&&... args)
        -> decltype(idlewheel::net::async_initiate<
                    const idlewheel::cancel_deadline_t<default_token<Initiation>, Wheel, Deadline>&, Signatures...>(
            std::forward<Initiation>(initiation),
            std::declval<const idlewheel::cancel_deadline_t<default_token<Initiation>, Wheel, Deadline>&>(),
            std::forward<Args>(args)...)) {
        const idlewheel::cancel_deadline_t<default_token<Initiation>, Wheel, Deadline> adapted(
            default_token<Initiation>{}, *token.wheel_, token.deadline_, token.cancel_type_);
        return idlewheel::net::async_initiate<
            const idlewheel::cancel_deadline_t<default_token<Initiation>, Wheel, Deadline>&, Signatures...>(
            std::forward<Initiation>(initiation), adapted, std::forward<Args>(args)...);
    }
};

#endif
