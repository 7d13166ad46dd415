#include "scenario.hpp"

#include "program_support/command_line.hpp"
#include "program_support/duration_option.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>

#include <algorithm>
#include <charconv>
#include <exception>
#include <cmath>
#include <limits>

namespace po = boost::program_options;

namespace loadgen {

namespace {

using program_support::duration_arg;  // a duration option value (program_support/duration_option.hpp)

// One role's share: "0.4" / ".4" (a fraction of --connections: has a decimal point) or "7600"
// (a count).
struct share {
    bool fraction = false;
    double value = 0;
};

std::optional<share> parse_share(const std::string& s) {
    if (s.empty()) return std::nullopt;
    const bool fraction = s.find('.') != std::string::npos;
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || !(value >= 0)) return std::nullopt;
    if (fraction && value > 1) return std::nullopt;
    if (!fraction && value != std::floor(value)) return std::nullopt;
    return share{fraction, value};
}

// Turns the four shares into counts that add up to `total`; fractions are rounded by largest
// remainder. Returns an error message, or nothing on success.
std::optional<std::string> resolve_mix(const std::array<share, role_count>& shares, std::size_t total,
                                       std::array<std::size_t, role_count>& counts) {
    double fraction_sum = 0;
    std::size_t fixed = 0;
    for (const auto& s : shares) {
        if (s.fraction)
            fraction_sum += s.value;
        else
            fixed += static_cast<std::size_t>(s.value);
    }
    if (fixed > total) return "the mix asks for more connections than --connections";
    const double rest = static_cast<double>(total - fixed);
    std::array<double, role_count> remainder{};
    std::size_t assigned = 0;
    for (std::size_t r = 0; r < role_count; ++r) {
        if (shares[r].fraction) {
            const double exact = shares[r].value * static_cast<double>(total);
            counts[r] = static_cast<std::size_t>(std::floor(exact));
            remainder[r] = exact - std::floor(exact);
        } else {
            counts[r] = static_cast<std::size_t>(shares[r].value);
        }
        assigned += counts[r];
    }
    if (assigned > total) return "the mix asks for more connections than --connections";
    // Rounding: hand the few leftover connections to the fractions with the largest remainders.
    if (fraction_sum > 0 && std::abs(fraction_sum * static_cast<double>(total) - rest) < 1.0) {
        while (assigned < total) {
            std::size_t best = role_count;
            for (std::size_t r = 0; r < role_count; ++r)
                if (shares[r].fraction && shares[r].value > 0 && (best == role_count || remainder[r] > remainder[best]))
                    best = r;
            if (best == role_count) break;
            ++counts[best];
            remainder[best] = -1;
            ++assigned;
        }
    }
    if (assigned != total)
        return "the mix (--idle, --active, --pingers, --dead, --stalled) adds up to " + std::to_string(assigned) +
               " connections, not --connections " + std::to_string(total);
    return std::nullopt;
}

// --url: SCHEME://HOST[:PORT][/PATH], SCHEME ws, wss or tcp; HOST an address (IPv6 in
// brackets) or localhost. Returns an error message, or nothing on success.
std::optional<std::string> apply_url(const std::string& url, scenario& s) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return "--url " + url + ": expected ws://HOST:PORT[/PATH], wss://... or tcp://HOST:PORT";
    const std::string scheme = url.substr(0, scheme_end);
    std::string rest = url.substr(scheme_end + 3);
    if (scheme == "ws" || scheme == "wss") {
        s.proto = protocol::ws;
        s.tls = scheme == "wss";
    } else if (scheme == "tcp") {
        s.proto = protocol::tcp;
    } else {
        return "--url " + url + ": the scheme must be ws, wss or tcp";
    }
    const auto slash = rest.find('/');
    const std::string authority = rest.substr(0, slash);
    s.path = slash == std::string::npos ? "/" : rest.substr(slash);
    if (s.proto == protocol::tcp && s.path != "/") return "--url " + url + ": a tcp:// URL has no path";
    std::string host, port;
    if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
        const auto close = authority.find(']');
        if (close == std::string::npos) return "--url " + url + ": unclosed [";
        host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') return "--url " + url + ": expected :PORT after ]";
            port = authority.substr(close + 2);
        }
    } else {
        const auto colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string::npos) port = authority.substr(colon + 1);
    }
    if (host.empty()) return "--url " + url + ": no host";
    if (host == "localhost") host = "127.0.0.1";
    unsigned value = 0;
    if (port.empty()) {
        if (s.proto == protocol::tcp) return "--url " + url + ": a tcp:// URL needs a port";
        value = s.tls ? 443 : 80;
    } else {
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535)
            return "--url " + url + ": bad port";
    }
    s.host = host;
    (s.proto == protocol::tcp ? s.tcp_port : s.ws_port) = static_cast<unsigned short>(value);
    s.url = url;
    return std::nullopt;
}

}  // namespace

std::optional<command> parse_command_line(int argc, char** argv, std::ostream& out, std::ostream& err, int& exit_code) {
    command cmd;
    scenario& s = cmd.run;
    std::string proto = "ws";
    std::string url, expect;
    std::array<std::string, role_count> shares;
    std::vector<std::string> close_codes, opens, closes;
    po::options_description desc(
        "loadgen: many clients against demo_server (or any server: --url); measures idle kicks, false kicks, echo round trips, server CPU "
        "and memory\n"
        "Durations: a number and a unit (us, ms, s, m). Mix: a fraction with a decimal point (0.4) or a count "
        "(7600).\n"
        "Usage: loadgen --http-port P [--protocol ws|tcp --tcp-port T] [--tls [--tls-ca FILE]] [options]\n"
        "       loadgen --url ws://HOST:PORT[/PATH] (or wss://, tcp://) EXPECTATION [--http-port P] [options]\n"
        "         EXPECTATION (any server, no /stats needed; bench/loadgen/README.md, \"Against any server\"):\n"
        "           --expect beast-timeouts --idle-timeout D [--handshake-timeout H]\n"
        "           --expect ws-heartbeat --heartbeat I\n"
        "           --expect python-websockets --ping-interval P --ping-timeout Q [--open-timeout H]\n"
        "           --expect idle-timeout --idle-timeout D [--pings] [--handshake-timeout H]\n"
        "           --expect-idle D [--expect-ping-interval P --expect-pong-timeout Q] (= --expect kicks)\n"
        "           --expect none | --expect observe\n"
        "           and over any of them, or alone: --expect-open ROLE[,ROLE...] --expect-close ROLE=A..B[@EVENT][:HOW]\n"
        "       loadgen --combine WHEEL.json ASIO.json [--json OUT.json]\n"
        "Plots: bench/loadgen/plot.py RESULT.json... --out OUT.svg (matplotlib)\nOptions");
    // clang-format off
    desc.add_options()
        ("help,h", "show this help")
        ("host", po::value(&s.host)->default_value(s.host), "server address (loopback only)")
        ("tcp-port", po::value(&s.tcp_port), "demo_server's raw TCP echo port (--protocol tcp)")
        ("http-port", po::value(&s.http_port), "demo_server's HTTP/WebSocket port (WebSocket echo and /stats; required without --url; with --url only /stats is read there, for the server's cost and a cross-check)")
        ("url", po::value(&url), "any server: ws://HOST:PORT[/PATH], wss://HOST:PORT[/PATH] (TLS: as --tls) or tcp://HOST:PORT (raw TCP echo); needs an expectation (--expect-idle, --expect beast-timeouts or --expect none); loopback only")
        ("expect", po::value(&expect), "what the server promises, the yardstick of every verdict, as a preset (each prints the windows it stands for): demo (demo_server's /stats), beast-timeouts (--idle-timeout D [--handshake-timeout H]), ws-heartbeat (--heartbeat I), python-websockets (--ping-interval P --ping-timeout Q [--open-timeout H]), idle-timeout (--idle-timeout D [--pings]), kicks (--expect-idle D ...), none (the server closes nobody) or observe (no promise: report how each role ended and which preset fits)")
        ("expect-open", po::value(&opens)->composing(), "ROLE[,ROLE...] (repeatable): these roles stay open to the end (over the preset's rule for them)")
        ("expect-close", po::value(&closes)->composing(), "ROLE=A..B[@EVENT][:HOW] (repeatable): the server closes ROLE's clients no sooner than A and no later than B (+ 2 ticks + --allowance) after EVENT (connect, handshake (default) or message: the client's last message), HOW any (default), frame, frame=CODE or bare (no close frame); over the preset's rule for that role. Roles no promise names are unbounded")
        ("heartbeat", po::value<duration_arg>(), "--expect ws-heartbeat: the interval I of the ws README's heartbeat (ping every I, terminate() at the next tick without a pong)")
        ("ping-timeout", po::value<duration_arg>(), "--expect python-websockets: its ping_timeout")
        ("open-timeout", po::value<duration_arg>(), "--expect python-websockets: its open_timeout (the handshake deadline: stalled clients are due then)")
        ("pings", "--expect idle-timeout: the server pings before the idle timeout (uWebSockets' sendPingsAutomatically): clients that answer pings stay open")
        ("print-promise", "print the promise (per role, JSON) and exit: scripts/load.sh reads it")
        ("expect-idle", po::value<duration_arg>(), "--expect kicks: idle and pinger clients are closed (close frame of any code, or a bare socket close) no sooner than this after their last message (pinger: the handshake) and within --allowance after it")
        ("expect-ping-interval", po::value<duration_arg>(), "--expect kicks: the server pings a silent client this long after its last message ...")
        ("expect-pong-timeout", po::value<duration_arg>(), "... and drops it this long after an unanswered ping: dead clients are due then (without these two, dead clients are due at --expect-idle)")
        ("expect-close-code", po::value(&close_codes)->multitoken(), "ROLE=CODE (repeatable, e.g. idle=1000 dead=1011): with --expect, a client of ROLE the server is expected to close must get a close frame with this code (any other close, or a bare socket close, is a wrong outcome)")
        ("protocol", po::value(&proto)->default_value(proto), "ws (WebSocket) or tcp (raw TCP echo)")
        ("tls", "the HTTP port speaks TLS (demo_server --tls): wss:// clients and /stats over https; the certificate is not verified unless --tls-ca is given. --protocol tcp clients stay plain (the TCP port is)")
        ("tls-ca", po::value(&s.tls_ca), "with --tls: verify the server's certificate against this CA (or self-signed certificate) file, PEM, and that it names --host")
        ("connections,n", po::value(&s.connections)->default_value(s.connections), "connections to open (at most what the descriptor limit allows, 19000 here)")
        ("threads", po::value(&s.threads)->default_value(s.threads), "client io_context threads")
        ("connect-rate", po::value(&s.connect_rate)->default_value(s.connect_rate), "connections started per second")
        ("max-connecting", po::value(&s.max_connecting)->default_value(s.max_connecting), "connections in connect + handshake at once")
        ("source-addresses", po::value(&s.source_addresses)->default_value(s.source_addresses), "connect from --first-source, the next address, ... round robin (0 = one per 8000 connections): Linux connect() slows down once one address has used half its ephemeral ports")
        ("first-source", po::value(&s.first_source), "the first client address, e.g. 127.0.0.2 (default: --host); several loadgen processes each take their own range")
        ("idle", po::value(&shares[0]), "idle clients: one message, then silence (default ws 0.4, tcp 0.5)")
        ("active", po::value(&shares[1]), "active clients: a message every --interval (default ws 0.4, tcp 0.5)")
        ("pingers", po::value(&shares[2]), "ws: clients that only answer pings (default 0.1)")
        ("dead", po::value(&shares[3]), "ws: clients that stop answering after the handshake (default 0.1)")
        ("stalled", po::value(&shares[4]), "ws (also over TLS), with --expect: clients that send half an upgrade request and never the rest; the server's handshake deadline (--handshake-timeout) must drop them, with no answer (default 0)")
        ("handshake-timeout", po::value<duration_arg>(), "with --expect: the server's handshake deadline: a stalled client is dropped no sooner than this after its connect began, and within --allowance after its half request was written")
        ("interval", po::value<duration_arg>(), "active clients' send interval (default 1s)")
        ("closed-loop", "active clients send their next message as soon as the echo arrives (saturation; --interval unused)")
        ("message-size", po::value(&s.message_size)->default_value(s.message_size), "bytes per message")
        ("idle-timeout", po::value<duration_arg>(), "the server's --idle-timeout (default: read from /stats); --expect beast-timeouts: the idle_timeout of Beast's timeout option")
        ("tick", po::value<duration_arg>(), "the server's --tick (default: read from /stats; with --url without /stats: 0)")
        ("ping-interval", po::value<duration_arg>(), "the server's --ping-interval (default 5s)")
        ("pong-timeout", po::value<duration_arg>(), "the server's --pong-timeout (default 5s)")
        ("ping-jitter", po::value<duration_arg>(), "the server's --ping-jitter (default 1s)")
        ("allowance", po::value<duration_arg>(), "scheduling allowance: a kick later than due + 2 ticks + this is missed (default 1s)")
        ("duration", po::value<duration_arg>(), "run time from the first connect to the final /stats (default 30s)")
        ("stats-interval", po::value<duration_arg>(), "how often to sample the server's /stats (default 500ms)")
        ("seed", po::value(&s.seed)->default_value(s.seed), "seed for role order and send phases")
        ("label", po::value(&s.label), "name of this run in reports (default: the server's timer mode; with --url: the expectation)")
        ("json", po::value(&s.json_path), "write the result as JSON to this file")
        ("no-progress", "no live progress line on stderr")
        ("progress-file", po::value(&s.progress_file), "every second (and once at the end), replace this file with the live counters as JSON: per role planned, connected, kicked (closed by the server), failed (scripts/load.sh merges several processes' files)")
        ("reconnect", "ws: a client the server closes with 1001 \"going away\" (a drain) connects again after a jittered back-off and carries on in its role, first sending again the message whose echo had not come back; failed attempts retry (bench/loadgen/README.md, \"Reconnecting\")")
        ("reconnect-delay", po::value<duration_arg>(), "--reconnect: the back-off's base: the first attempt after a random 0..base, the k-th failed one after base * 2^k * 0.5..1.5, at most 5s (default 100ms)")
        ("reconnect-attempts", po::value(&s.reconnect_attempts)->default_value(s.reconnect_attempts), "--reconnect: attempts per close before the client counts as failed")
        ("combine", po::value(&cmd.inputs)->multitoken(), "combine result files (wheel first, then asio) into ratios, JSON and SVG");
    // clang-format on
    const auto options = program_support::parse_options(argc, argv, desc, "loadgen", out, err, exit_code);
    if (!options) return std::nullopt;
    const po::variables_map& vm = *options;
    const auto fail = [&](const std::string& problem) -> std::optional<command> {
        err << "loadgen: " << problem << "\n(see --help)\n";
        exit_code = 2;
        return std::nullopt;
    };
    if (vm.count("combine") != 0U) {
        cmd.what = command::kind::combine;
        cmd.json_path = s.json_path;
        if (cmd.inputs.size() != 2) return fail("--combine takes two result files (wheel, then asio)");
        return cmd;
    }
    const auto get = [&vm](const char* name, nanoseconds& into) {
        if (vm.count(name) != 0U) into = vm[name].as<duration_arg>().value;
    };
    get("interval", s.interval);
    get("idle-timeout", s.idle_timeout);
    get("tick", s.tick);
    get("ping-interval", s.ping_interval);
    get("pong-timeout", s.pong_timeout);
    get("ping-jitter", s.ping_jitter);
    get("allowance", s.allowance);
    get("duration", s.duration);
    get("stats-interval", s.stats_interval);
    get("reconnect-delay", s.reconnect_delay);
    get("handshake-timeout", s.handshake_timeout);
    s.reconnect = vm.count("reconnect") != 0U;
    s.progress = vm.count("no-progress") == 0U;
    s.closed_loop = vm.count("closed-loop") != 0U;
    s.tls = vm.count("tls") != 0U;

    if (proto == "ws")
        s.proto = protocol::ws;
    else if (proto == "tcp")
        s.proto = protocol::tcp;
    else
        return fail("--protocol must be ws or tcp");
    if (!url.empty()) {
        if (!vm["protocol"].defaulted()) return fail("--url says the protocol: leave out --protocol");
        if (!vm["host"].defaulted()) return fail("--url says the host: leave out --host");
        if (vm.count("tcp-port") != 0U) return fail("--url says the port: leave out --tcp-port");
        if (s.tls) return fail("--url says whether it is TLS (wss://): leave out --tls");
        if (const auto problem = apply_url(url, s)) return fail(*problem);
    } else {
        s.ws_port = s.http_port;
    }
    if (!s.tls_ca.empty() && !s.tls) return fail("--tls-ca needs --tls (or a wss:// --url)");

    // What the server promised: the verdicts' yardstick.
    const bool expect_idle = vm.count("expect-idle") != 0U, expect_ping = vm.count("expect-ping-interval") != 0U,
               expect_pong = vm.count("expect-pong-timeout") != 0U;
    const bool general = !opens.empty() || !closes.empty();
    if (expect.empty() && (expect_idle || expect_ping || expect_pong)) expect = "kicks";
    if (expect.empty() && general) expect = "custom";
    static constexpr std::array<expectation, 9> all{expectation::demo, expectation::kicks, expectation::beast,
                                                     expectation::ws_heartbeat, expectation::python_websockets,
                                                     expectation::idle_timeout, expectation::none,
                                                     expectation::observe, expectation::custom};
    if (expect.empty()) expect = "demo";
    const auto known = std::find_if(all.begin(), all.end(), [&](expectation e) { return name(e) == expect; });
    if (known == all.end() || (*known == expectation::custom && !general))
        return fail("--expect must be demo, beast-timeouts, ws-heartbeat, python-websockets, idle-timeout, kicks, none "
                    "or observe");
    s.expect = *known;
    const auto only_with = [&](const char* flag, expectation e) {
        return vm.count(flag) != 0U && s.expect != e;
    };
    if (only_with("heartbeat", expectation::ws_heartbeat)) return fail("--heartbeat goes with --expect ws-heartbeat");
    if (only_with("ping-timeout", expectation::python_websockets) || only_with("open-timeout", expectation::python_websockets))
        return fail("--ping-timeout and --open-timeout go with --expect python-websockets");
    if (only_with("pings", expectation::idle_timeout)) return fail("--pings goes with --expect idle-timeout");
    if (s.expect == expectation::demo) {
        if (general) return fail("--expect-open and --expect-close need a --url's promise, not demo_server's /stats");
        if (s.http_port == 0)
            return fail(url.empty() ? "--http-port is required (the WebSocket echo and /stats), or --url"
                                    : "--url needs the server's promises: --expect PRESET (beast-timeouts, ws-heartbeat, "
                                      "python-websockets, idle-timeout, none, observe), --expect-idle D, or "
                                      "--expect-open / --expect-close (or --http-port: demo_server's /stats)");
        s.heartbeats = s.ping_interval > nanoseconds::zero();
    } else {
        if (s.expect != expectation::python_websockets && vm.count("ping-interval") + vm.count("pong-timeout") != 0U)
            return fail("--ping-interval and --pong-timeout are demo_server's settings; with --expect use "
                        "--expect-ping-interval and --expect-pong-timeout");
        if (s.expect == expectation::python_websockets && vm.count("pong-timeout") != 0U)
            return fail("--expect python-websockets: the pong deadline is --ping-timeout");
        if (s.expect != expectation::kicks && (expect_idle || expect_ping || expect_pong))
            return fail("--expect-idle, --expect-ping-interval and --expect-pong-timeout go with --expect kicks");
        s.heartbeats = false;
    }
    const bool ws = s.proto == protocol::ws;
    const auto needs_ws = [&](std::string_view preset) -> std::optional<command> {
        return fail("--expect " + std::string(preset) + " is for WebSocket servers (ws:// or wss://)");
    };
    using kind = role_promise::kind;
    const auto closed = [](nanoseconds a, nanoseconds b, close_event e, close_how how, std::uint16_t code = 0) {
        role_promise p;
        p.what = kind::closed;
        p.from = a;
        p.to = b;
        p.after = e;
        p.how = how;
        p.code = code;
        return p;
    };
    role_promise open, unbounded;
    unbounded.what = kind::unbounded;
    auto& promise = s.promise;
    const auto ri = [](role r) { return index(r); };
    // Stalled clients: the handshake deadline when one is given, else nothing bounds them.
    const auto stalled_rule = [&] {
        return s.handshake_timeout > nanoseconds::zero()
                   ? closed(s.handshake_timeout, s.handshake_timeout, close_event::connect, close_how::bare)
                   : unbounded;
    };
    std::string flags;
    switch (s.expect) {
        case expectation::demo: break;  // from /stats (analysis.cpp)
        case expectation::kicks: {
            if (!expect_idle) return fail("--expect kicks needs --expect-idle");
            if (vm.count("idle-timeout") != 0U) return fail("--expect kicks: the idle timeout is --expect-idle");
            get("expect-idle", s.idle_timeout);
            if (s.idle_timeout <= nanoseconds::zero()) return fail("--expect-idle must be > 0");
            if (expect_ping != expect_pong) return fail("--expect-ping-interval and --expect-pong-timeout go together");
            flags = "--expect-idle " + duration_text(s.idle_timeout);
            if (expect_ping) {
                get("expect-ping-interval", s.ping_interval);
                get("expect-pong-timeout", s.pong_timeout);
                if (s.ping_interval <= nanoseconds::zero() || s.pong_timeout <= nanoseconds::zero())
                    return fail("--expect-ping-interval and --expect-pong-timeout must be > 0");
                s.heartbeats = true;
                flags += " --expect-ping-interval " + duration_text(s.ping_interval) + " --expect-pong-timeout " +
                         duration_text(s.pong_timeout) + " --ping-jitter " + duration_text(s.ping_jitter);
            }
            const auto d = s.idle_timeout;
            promise[ri(role::idle)] = closed(d, d, close_event::message, close_how::any);
            promise[ri(role::active)] = open;
            promise[ri(role::pinger)] = closed(d, d, close_event::message, close_how::any);
            // Whichever comes first: the heartbeat's drop or the idle timeout.
            const auto beat = s.ping_interval + s.pong_timeout;
            promise[ri(role::dead)] = s.heartbeats && beat < d
                                          ? closed(beat, std::min(beat + s.ping_jitter, d), close_event::handshake,
                                                   close_how::any)
                                          : closed(d, d, close_event::handshake, close_how::any);
            promise[ri(role::stalled)] = stalled_rule();
            break;
        }
        case expectation::beast:
            if (!ws) return needs_ws("beast-timeouts");
            if (s.idle_timeout <= nanoseconds::zero())
                return fail("--expect beast-timeouts needs --idle-timeout (the idle_timeout of the server's timeout option)");
            flags = "beast-timeouts --idle-timeout " + duration_text(s.idle_timeout);
            // Every client but the dead one answers pings (Beast reads under the idle, active and
            // pinger clients): Beast keeps them all. The dead client's last byte was its upgrade
            // request: a ping idle / 2 later, unanswered, and a drop (no close frame) idle / 2 later.
            promise.fill(open);
            promise[ri(role::dead)] = closed(s.idle_timeout, s.idle_timeout, close_event::handshake, close_how::bare);
            promise[ri(role::stalled)] = stalled_rule();
            break;
        case expectation::ws_heartbeat: {
            if (!ws) return needs_ws("ws-heartbeat");
            get("heartbeat", s.heartbeat);
            if (s.heartbeat <= nanoseconds::zero())
                return fail("--expect ws-heartbeat needs --heartbeat I (the interval of the server's setInterval)");
            if (vm.count("handshake-timeout") != 0U)
                return fail("--expect ws-heartbeat: the ws package has no handshake deadline; for one, add "
                            "--expect-close stalled=H..H@connect:bare");
            flags = "ws-heartbeat --heartbeat " + duration_text(s.heartbeat);
            // Every I the server terminate()s whoever did not pong since the last tick, then pings
            // the rest: a client dead from its handshake goes at the second tick after it.
            promise.fill(open);
            promise[ri(role::dead)] = closed(s.heartbeat, 2 * s.heartbeat, close_event::handshake, close_how::bare);
            promise[ri(role::stalled)] = unbounded;
            break;
        }
        case expectation::python_websockets: {
            if (!ws) return needs_ws("python-websockets");
            if (vm.count("ping-interval") == 0U || vm.count("ping-timeout") == 0U)
                return fail("--expect python-websockets needs --ping-interval P and --ping-timeout Q (its "
                            "ping_interval and ping_timeout)");
            if (vm.count("handshake-timeout") != 0U)
                return fail("--expect python-websockets: its handshake deadline is --open-timeout");
            get("ping-interval", s.ping_interval);
            get("ping-timeout", s.ping_timeout);
            get("open-timeout", s.handshake_timeout);
            if (s.ping_interval <= nanoseconds::zero() || s.ping_timeout <= nanoseconds::zero())
                return fail("--ping-interval and --ping-timeout must be > 0");
            flags = "python-websockets --ping-interval " + duration_text(s.ping_interval) + " --ping-timeout " +
                    duration_text(s.ping_timeout) +
                    (s.handshake_timeout > nanoseconds::zero() ? " --open-timeout " + duration_text(s.handshake_timeout)
                                                               : std::string());
            // A ping every P from the handshake; no pong within Q: close frame 1011.
            promise.fill(open);
            promise[ri(role::dead)] = closed(s.ping_interval + s.ping_timeout, 2 * s.ping_interval + s.ping_timeout,
                                             close_event::handshake, close_how::frame_code, 1011);
            promise[ri(role::stalled)] = stalled_rule();
            break;
        }
        case expectation::idle_timeout: {
            if (s.idle_timeout <= nanoseconds::zero())
                return fail("--expect idle-timeout needs --idle-timeout D (the server's idleTimeout)");
            s.pings = vm.count("pings") != 0U;
            if (s.pings && !ws) return needs_ws("idle-timeout --pings");
            flags = "idle-timeout --idle-timeout " + duration_text(s.idle_timeout) + (s.pings ? " --pings" : "");
            const auto d = s.idle_timeout;
            // Silent for D (nothing received): closed. With --pings a pong counts as something.
            promise[ri(role::idle)] = s.pings ? open : closed(d, d, close_event::message, close_how::any);
            promise[ri(role::active)] = open;
            promise[ri(role::pinger)] = s.pings ? open : closed(d, d, close_event::message, close_how::any);
            promise[ri(role::dead)] = closed(d, d, close_event::message, close_how::any);
            promise[ri(role::stalled)] = stalled_rule();
            break;
        }
        case expectation::none:
            flags = "none";
            promise.fill(open);
            break;
        case expectation::observe:
            flags = "observe";
            promise.fill(unbounded);
            break;
        case expectation::custom: promise.fill(unbounded); break;
    }
    // The general form, over the preset.
    const auto role_of = [](std::string text) -> std::optional<role> {
        if (text == "pingers") text = "pinger";
        const auto r = std::find(role_names.begin(), role_names.end(), text);
        if (r == role_names.end()) return std::nullopt;
        return static_cast<role>(r - role_names.begin());
    };
    for (const auto& list : opens) {
        std::size_t begin = 0;
        while (begin <= list.size()) {
            const auto comma = std::min(list.find(',', begin), list.size());
            const auto r = role_of(list.substr(begin, comma - begin));
            if (!r) return fail("--expect-open " + list + ": roles are idle, active, pinger, dead, stalled");
            promise[index(*r)] = open;
            begin = comma + 1;
        }
    }
    for (const auto& item : closes) {
        const auto eq = item.find('=');
        const auto r = role_of(item.substr(0, eq));
        if (eq == std::string::npos || !r)
            return fail("--expect-close " + item + ": expected ROLE=A..B[@EVENT][:HOW], ROLE one of idle, active, "
                        "pinger, dead, stalled");
        if (const auto problem = parse_close_window(item.substr(eq + 1), promise[index(*r)]))
            return fail("--expect-close " + item + ": " + *problem);
    }
    if (general && s.expect != expectation::custom)
        for (const auto& item : opens) flags += " --expect-open " + item;
    if (general && s.expect != expectation::custom)
        for (const auto& item : closes) flags += " --expect-close " + item;
    s.preset_flags = s.expect == expectation::kicks ? flags : (s.expect == expectation::custom ? "" : "--expect " + flags);
    s.print_promise = vm.count("print-promise") != 0U;

    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(s.host, ec);
    if (ec || !address.is_loopback())
        return fail("--host must be a loopback address (this is a benchmark, not a flood tool)");
    if (s.proto == protocol::tcp && s.tcp_port == 0) return fail("--protocol tcp needs --tcp-port");
    if (s.connections == 0) return fail("--connections must be > 0");
    if (s.threads == 0 || s.threads > 64) return fail("--threads must be between 1 and 64");
    if (!(s.connect_rate > 0)) return fail("--connect-rate must be > 0");
    if (s.max_connecting == 0) return fail("--max-connecting must be > 0");
    if (s.source_addresses == 0) s.source_addresses = (s.connections + 7999) / 8000;
    if (s.source_addresses > 1 && !address.is_v4()) return fail("--source-addresses above 1 needs an IPv4 --host");
    if (s.source_addresses > 250) return fail("--source-addresses must be at most 250");
    if (!s.first_source.empty()) {
        const auto first = boost::asio::ip::make_address(s.first_source, ec);
        if (ec || !first.is_loopback() || first.is_v4() != address.is_v4())
            return fail("--first-source must be a loopback address of the --host's family");
        if (first.is_v4() && (first.to_v4().to_uint() & 0xffU) + s.source_addresses > 255)
            return fail("--first-source + --source-addresses runs past x.x.x.254");
    }
    if (s.message_size == 0 || s.message_size > 60 * 1024) return fail("--message-size must be between 1 and 61440");
    if (s.interval <= nanoseconds::zero()) return fail("--interval must be > 0");
    if (s.duration <= nanoseconds::zero()) return fail("--duration must be > 0");
    if (s.stats_interval < std::chrono::milliseconds(50)) return fail("--stats-interval must be at least 50ms");
    if (s.reconnect && s.proto != protocol::ws) return fail("--reconnect is for WebSocket clients (--protocol ws)");
    if (s.reconnect && (s.reconnect_delay <= nanoseconds::zero() || s.reconnect_attempts == 0))
        return fail("--reconnect-delay and --reconnect-attempts must be > 0");

    const bool any_share =
        vm.count("idle") + vm.count("active") + vm.count("pingers") + vm.count("dead") + vm.count("stalled") != 0U;
    if (!any_share) {
        if (s.proto == protocol::ws)
            shares = {"0.4", "0.4", "0.1", "0.1"};
        else
            shares = {"0.5", "0.5", "0", "0"};
    }
    std::array<share, role_count> parsed{};
    for (std::size_t r = 0; r < role_count; ++r) {
        if (shares[r].empty()) continue;  // not given while others were: none of this role
        const auto p = parse_share(shares[r]);
        if (!p)
            return fail("--" + std::string(r == 2 ? "pingers" : role_names[r]) + " " + shares[r] +
                        ": expected a fraction 0.0..1.0 or a count");
        parsed[r] = *p;
    }
    if (const auto problem = resolve_mix(parsed, s.connections, s.mix)) return fail(*problem);
    if (s.mix[index(role::stalled)] != 0) {
        if (s.proto != protocol::ws)
            return fail("stalled clients stop in the middle of a WebSocket upgrade: ws:// or wss:// only");
        if (s.expect == expectation::demo)
            return fail("stalled clients are judged against a promised handshake deadline: give --expect ... and "
                        "--handshake-timeout");
        if (s.reconnect) return fail("--reconnect has no stalled clients");
    }
    for (const auto& item : close_codes) {
        const auto eq = item.find('=');
        const auto role_name = item.substr(0, eq);
        const auto r = std::find(role_names.begin(), role_names.end(), role_name == "pingers" ? "pinger" : role_name);
        unsigned long code = 0;
        try {
            code = eq == std::string::npos ? 0 : std::stoul(item.substr(eq + 1));
        } catch (const std::exception&) {
            code = 0;
        }
        if (r == role_names.end() || code < 1000 || code > 4999)
            return fail("--expect-close-code " + item + ": expected ROLE=CODE, a role (idle, active, pinger, dead, stalled) and a close code 1000..4999");
        if (s.expect == expectation::demo || s.proto != protocol::ws)
            return fail("--expect-close-code needs a WebSocket --url and an expectation (--expect-idle, --expect ...)");
        const auto k = static_cast<std::size_t>(r - role_names.begin());
        s.close_code[k] = static_cast<std::uint16_t>(code);
        if (s.promise[k].closed()) {  // the demo's rules take it in analysis.cpp
            s.promise[k].how = close_how::frame_code;
            s.promise[k].code = s.close_code[k];
        }
    }
    if (s.proto == protocol::tcp && (s.mix[index(role::pinger)] != 0 || s.mix[index(role::dead)] != 0))
        return fail("pingers and dead clients need WebSocket pings: use --protocol ws");
    if (s.expect == expectation::demo) {
        if (s.proto == protocol::ws && s.ping_interval > nanoseconds::zero() && s.pong_timeout <= nanoseconds::zero())
            return fail("--pong-timeout must be > 0 when --ping-interval is set");
        if (s.mix[index(role::dead)] != 0 && s.ping_interval <= nanoseconds::zero())
            return fail("dead clients are only dropped by heartbeats: give the server's --ping-interval");
    }
    return cmd;
}

std::string promise_flags(const scenario& s) {
    std::string opens, closes, unbounded;
    for (std::size_t r = 0; r < role_count; ++r) {
        if (s.mix[r] == 0) continue;
        const auto& p = s.promise[r];
        const std::string who(role_names[r]);
        if (p.what == role_promise::kind::open) opens += (opens.empty() ? "" : ",") + who;
        if (p.closed()) closes += " --expect-close " + who + "=" + p.spelling();
    }
    const std::string flags = (opens.empty() ? std::string() : "--expect-open " + opens) + closes;
    return flags.empty() || flags.front() != ' ' ? flags : flags.substr(1);
}

void print_promise(const scenario& s, std::ostream& out) {
    if (s.expect == expectation::demo) return;  // its rules come from /stats: printed with the result
    out << "promise    " << (s.preset_flags.empty() ? std::string("(as given)") : s.preset_flags);
    const auto general = promise_flags(s);
    if (!general.empty()) out << "\n           = " << general;
    out << "\n";
    for (std::size_t r = 0; r < role_count; ++r) {
        if (s.mix[r] == 0) continue;
        out << "           " << role_names[r] << std::string(8 - role_names[r].size(), ' ') << s.promise[r].words();
        if (r == index(role::stalled) && s.promise[r].what == role_promise::kind::unbounded &&
            s.expect != expectation::observe && s.expect != expectation::custom)
            out << ": no handshake deadline given";
        out << "\n";
    }
    if (s.expect != expectation::observe && s.expect != expectation::none)
        out << "           (--allowance " << duration_text(s.allowance)
            << " and 2 ticks widen each window's end, never its start)\n";
}

}  // namespace loadgen
