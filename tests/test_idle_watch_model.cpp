// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#include <idlewheel/idle_watch.hpp>

// basic_idle_watch against a model, 100 000 watches at a time (a source file of the executable
// test_idle_watch, whose first file is test_idle_watch.cpp).

#include "support/idle_kinds.hpp"
#include "support/liveness_scene.hpp"

#include <idlewheel/manual_clock.hpp>
#include <idlewheel/timer_node.hpp>
#include <idlewheel/wheel_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using idlewheel::idle_kind;
using idlewheel::idle_options;
using idlewheel::test::liveness::scene;
using idlewheel::test::liveness::tick_ms;
using idlewheel::test::liveness::wheel_type;
using watch_type = idlewheel::basic_idle_watch<wheel_type>;

using idlewheel::test::idle_kinds::ms;
using idlewheel::test::idle_kinds::name;
using idlewheel::test::idle_kinds::only;

}  // namespace

// ---------------------------------------------------------------------------------------------
// The model test: many watches, random activity, and a model that knows the exact time of
// every activity. Every report is checked when it comes; every missing report is found at the
// watch's next activity or at the end.

namespace {

struct model_check {
    idle_kind kind;                        // what every watch watches
    std::vector<std::int64_t> idle_times;  // T, drawn per watch
    std::int64_t bound;                    // report - reference - T must be < bound
    std::size_t watches;
    std::int64_t duration_ms;
    std::uint64_t seed;
};

struct model_result {
    std::uint64_t reports = 0, repeats = 0, activities = 0, ignored = 0;
    std::uint64_t early = 0, late = 0, wrong_kind = 0, wrong_first = 0, missing = 0;
    std::string first_problem;
};

class model_run {
public:
    static constexpr std::int64_t never = std::numeric_limits<std::int64_t>::min() / 4;

    explicit model_run(const model_check& c) : check_(c) {}

    model_result run() {
        scene s;
        stage_ = &s;
        std::mt19937_64 rng(check_.seed);
        const auto n = check_.watches;
        idle_.resize(n);
        last_activity_.assign(n, 0);  // start() counts as activity
        last_report_.assign(n, never);

        // Sessions of five temperaments, from chatty to silent; T drawn independently.
        const double mean_gap_ms[] = {30.0, 120.0, 450.0, 2000.0, 0.0};  // 0: never active
        std::vector<double> gap(n);
        for (std::size_t i = 0; i < n; ++i) {
            gap[i] = mean_gap_ms[rng() % 5];
            idle_[i] = check_.idle_times[rng() % check_.idle_times.size()];
        }
        for (std::size_t i = 0; i < n; ++i) {
            sessions_.emplace_back(s, *this, static_cast<std::uint32_t>(i), only(check_.kind, idle_[i]));
            sessions_.back().watch.start();
        }

        // Activity as a per-millisecond bucket of (session, is_read): a random subset each
        // step, each session active with probability 1/gap per ms.
        const auto steps = static_cast<std::size_t>(check_.duration_ms) + 1;
        std::vector<std::vector<std::uint32_t>> due(steps);
        auto plan = [&](std::size_t i, std::int64_t from) {
            if (gap[i] == 0.0) return;
            std::geometric_distribution<std::int64_t> next(1.0 / gap[i]);
            const std::int64_t t = from + 1 + next(rng);
            if (t < check_.duration_ms) due[static_cast<std::size_t>(t)].push_back(static_cast<std::uint32_t>(i));
        };
        for (std::size_t i = 0; i < n; ++i) plan(i, 0);

        s.step_to(check_.duration_ms, [&](std::int64_t t) {
            auto& now_due = due[static_cast<std::size_t>(t)];
            for (const std::uint32_t i : now_due) {
                // A quarter of the activity is of the other direction: it must not count for
                // reader- or writer-idle, and counts for all-idle.
                const bool read = rng() % 4 != 0;
                activity(i, read, t);
                plan(i, t);
            }
            now_due.clear();
            now_due.shrink_to_fit();
        });
        for (std::size_t i = 0; i < n; ++i) {
            if (check_.duration_ms >= reference(i) + idle_[i] + check_.bound)
                problem(result_.missing, i, check_.duration_ms, "missing report at the end");
        }
        const auto st = s.live;
        stats_reports_ = st.reader_idle + st.writer_idle + st.all_idle;
        sessions_.clear();  // before the scene's wheel
        return result_;
    }

    [[nodiscard]] std::uint64_t stats_reports() const { return stats_reports_; }

private:
    struct session {
        session(scene& s, model_run& m, std::uint32_t i, const idle_options& o)
            : run(&m), id(i), watch(s.wheel, idlewheel::bind_member<&session::on_idle>(this), o, &s.live) {}
        void on_idle(idle_kind kind, bool first) { run->report(id, kind, first); }

        model_run* run;
        std::uint32_t id;
        watch_type watch;
    };

    [[nodiscard]] std::int64_t reference(std::size_t i) const { return std::max(last_activity_[i], last_report_[i]); }

    void activity(std::uint32_t i, bool read, std::int64_t t) {
        auto& w = sessions_[i].watch;
        read ? w.on_read() : w.on_write();
        const bool counts = check_.kind == idle_kind::all || (check_.kind == idle_kind::reader) == read;
        if (!counts) {
            ++result_.ignored;
            return;
        }
        ++result_.activities;
        // The report due before this activity must have come in an earlier poll.
        if (t >= reference(i) + idle_[i] + check_.bound) problem(result_.missing, i, t, "missing report before activity");
        last_activity_[i] = t;
    }

    void report(std::uint32_t i, idle_kind kind, bool first) {
        const std::int64_t now = stage_->now_ms();
        ++result_.reports;
        if (!first) ++result_.repeats;
        if (kind != check_.kind) problem(result_.wrong_kind, i, now, "wrong kind");
        const std::int64_t ref = reference(i);
        if (now < ref + idle_[i]) problem(result_.early, i, now, "early");
        if (now >= ref + idle_[i] + check_.bound) problem(result_.late, i, now, "late");
        if (first != (last_activity_[i] > last_report_[i])) problem(result_.wrong_first, i, now, "wrong first flag");
        last_report_[i] = now;
    }

    void problem(std::uint64_t& counter, std::size_t i, std::int64_t t, const char* what) {
        if (counter++ == 0 && result_.first_problem.empty()) {
            std::ostringstream os;
            os << what << ": watch " << i << " at " << t << " ms, T " << idle_[i] << " ms, last activity "
               << last_activity_[i] << " ms, last report " << (last_report_[i] == never ? -1 : last_report_[i]) << " ms";
            result_.first_problem = os.str();
        }
    }

    model_check check_;
    const scene* stage_ = nullptr;
    std::deque<session> sessions_;  // watches are not movable
    std::vector<std::int64_t> idle_, last_activity_, last_report_;
    model_result result_;
    std::uint64_t stats_reports_ = 0;
};

void expect_model_agrees(const model_check& c) {
    model_run m(c);
    const model_result r = m.run();
    BOOST_TEST_MESSAGE(name(c.kind) << ": " << r.reports << " reports (" << r.repeats << " repeats), " << r.activities
                                    << " counted activities, " << r.ignored << " ignored");
    BOOST_TEST_INFO(r.first_problem);
    BOOST_TEST(r.early == 0U);
    BOOST_TEST_INFO(r.first_problem);
    BOOST_TEST(r.late == 0U);
    BOOST_TEST_INFO(r.first_problem);
    BOOST_TEST(r.missing == 0U);
    BOOST_TEST_INFO(r.first_problem);
    BOOST_TEST(r.wrong_first == 0U);
    BOOST_TEST(r.wrong_kind == 0U);
    BOOST_TEST(m.stats_reports() == r.reports);
    // Not vacuous: plenty of first reports, repeats, activity.
    BOOST_TEST(r.reports - r.repeats > c.watches / 4);
    BOOST_TEST(r.repeats > c.watches / 4);
    BOOST_TEST(r.activities > 10 * c.watches);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model)

// 100 000 reader-idle watches, T a whole number of ticks: every report within one tick.
BOOST_AUTO_TEST_CASE(reader_idle_of_100000_watches_matches_the_model) {
    expect_model_agrees({.kind = idle_kind::reader,
                         .idle_times = {200, 500, 1000},
                         .bound = tick_ms,
                         .watches = 100'000,
                         .duration_ms = 3000,
                         .seed = 0x1d1e'3bee'0001ULL});
}

// T not a whole number of ticks (two ticks of bound), all-idle (both directions count).
BOOST_AUTO_TEST_CASE(all_idle_of_100000_watches_with_odd_times_matches_the_model) {
    expect_model_agrees({.kind = idle_kind::all,
                         .idle_times = {205, 503, 997},
                         .bound = 2 * tick_ms,
                         .watches = 100'000,
                         .duration_ms = 3000,
                         .seed = 0x1d1e'3bee'0002ULL});
}

BOOST_AUTO_TEST_SUITE_END()
