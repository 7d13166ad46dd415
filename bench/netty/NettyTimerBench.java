// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Netty's own HashedWheelTimer (Debian's libnetty-java, netty-common.jar) doing the work of
// bench/micro/ (see workload.hpp there: the constants and the splitmix64 sequence below are
// the same), printing the same units:
//
//   schedule_cancel  newTimeout(30 s) + cancel() on a timer already holding N timeouts whose
//                    delays are spread over [15 s, 30 s];
//   touch            cancel() the timeout of connection c and newTimeout(30 s) again (the only
//                    way to re-arm a HashedWheelTimer timeout), c walking all N scattered;
//   expire           N timeouts due in one tick, their tasks running (per timeout);
//   memory           Java heap per armed timeout (used heap after GC, Timeout + task + the
//                    array slot that keeps the handle), N timeouts an hour ahead;
//   idle             N timeouts an hour ahead, nothing due: worker ticks per second and the
//                    worker thread's voluntary context switches per second (the C++ cases
//                    count the latter for their loop thread).
//
// Costs are CPU time, as in the C++ cases. HashedWheelTimer splits its work between the
// caller (newTimeout and cancel enqueue) and its worker thread (which moves timeouts into
// buckets and drops cancelled ones every tick), and allocates per timeout (the garbage
// collector's work): ns_per_op is therefore the whole process's CPU time per operation
// (caller + worker + GC), measured after a warm-up so that no JIT compilation is counted;
// caller_ns_per_op is the caller's share alone. Expire is the worker's CPU time from the
// start of the first task to the end of the last; the transfer of the N timeouts into their
// bucket happened on earlier ticks and is in no figure.
//
// Usage: java -cp <classes>:/usr/share/java/netty-common.jar NettyTimerBench
//          [--sizes=1000,10000,100000,1000000] [--idle_ms=1000] [--min_ms=300] [--max_rounds=20]
//          [--json=FILE]

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

public final class NettyTimerBench {
    // The workload (bench/micro/workload.hpp).
    static final long OP_DELAY_MS = 30_000;
    static final long BACKGROUND_MIN_MS = 15_000;
    static final long BACKGROUND_MAX_MS = 30_000;
    static final long FAR_DELAY_MS = 3_600_000;
    static final long TICK_MS = 10;
    static final int TICKS_PER_WHEEL = 512;  // Netty's default
    static final long SEED = 0x1d1eb0a75eed0001L;
    static final String WORKER_NAME = "iw-netty-wheel";  // found again in /proc/self/task/*/comm

    static final class SplitMix64 {
        private long state;
        SplitMix64(long seed) { state = seed; }
        long next() {
            long z = (state += 0x9e3779b97f4a7c15L);
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            return z ^ (z >>> 31);
        }
    }

    static final class BackgroundDelays {
        private final SplitMix64 rng = new SplitMix64(SEED);
        long nextMs() {
            long span = BACKGROUND_MAX_MS - BACKGROUND_MIN_MS + 1;
            return BACKGROUND_MIN_MS + Long.remainderUnsigned(rng.next(), span);
        }
    }

    static final class ScatteredOrder {
        private final int n;
        private final int stride;
        private int at = 0;
        ScatteredOrder(int n) {
            this.n = n;
            long s = 2654435761L % n;
            if (s == 0) s = 1;
            while (gcd(s, n) != 1) ++s;
            stride = (int) s;
        }
        private static long gcd(long a, long b) { return b == 0 ? a : gcd(b, a % b); }
        int next() {
            int c = at;
            at += stride;
            if (at >= n) at -= n;
            return c;
        }
    }

    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    // A timer whose worker thread we can find (for its CPU time and its context switches).
    static final class Wheel implements AutoCloseable {
        final HashedWheelTimer timer;
        volatile Thread worker;
        Wheel() {
            ThreadFactory factory = r -> {
                Thread t = new Thread(r, WORKER_NAME);
                t.setDaemon(true);
                worker = t;
                return t;
            };
            timer = new HashedWheelTimer(factory, TICK_MS, TimeUnit.MILLISECONDS, TICKS_PER_WHEEL, false);
            timer.start();
        }
        long workerCpuNs() { return THREADS.getThreadCpuTime(worker.getId()); }
        long startTimeNs() { return (Long) read(timer, "startTime"); }
        long ticks() {
            Object w = read(timer, "worker");
            return (Long) read(w, "tick");
        }
        @Override public void close() { timer.stop(); }
    }

    static Object read(Object o, String field) {
        try {
            Field f = o.getClass().getDeclaredField(field);
            f.setAccessible(true);
            return f.get(o);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + field + " of " + o.getClass(), e);
        }
    }

    // ---- results --------------------------------------------------------------------------

    static final List<String> JSON = new ArrayList<>();

    static void result(String family, int n, String... kv) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-16s netty  N=%-8d", family, n));
        StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
                "{\"family\": \"%s\", \"contender\": \"netty\", \"n\": %d", family, n));
        for (int i = 0; i + 1 < kv.length; i += 2) {
            line.append(' ').append(kv[i]).append('=').append(kv[i + 1]);
            json.append(", \"").append(kv[i]).append("\": ").append(kv[i + 1]);
        }
        json.append('}');
        System.out.println(line);
        JSON.add(json.toString());
    }

    static String num(double v) { return String.format(Locale.ROOT, "%.3f", v); }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
    }

    static long sink;  // what tasks do: count (keeps them from being optimised away)

    // ---- schedule + cancel, touch ----------------------------------------------------------

    interface Op { void run(); }

    // Runs `op` for warm-up, then `rounds` rounds of at least minMs each; reports the medians.
    static void timeOps(String family, int n, Op op, long minMs) {
        final int rounds = 5;
        double[] total = new double[rounds], caller = new double[rounds], wall = new double[rounds];
        long warmEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(minMs, 200));
        while (System.nanoTime() < warmEnd) for (int i = 0; i < 1024; ++i) op.run();
        for (int r = 0; r < rounds; ++r) {
            long ops = 0;
            long p0 = OS.getProcessCpuTime(), c0 = THREADS.getCurrentThreadCpuTime(), w0 = System.nanoTime();
            long end = w0 + TimeUnit.MILLISECONDS.toNanos(minMs);
            do {
                for (int i = 0; i < 1024; ++i) op.run();
                ops += 1024;
            } while (System.nanoTime() < end);
            long w1 = System.nanoTime(), c1 = THREADS.getCurrentThreadCpuTime(), p1 = OS.getProcessCpuTime();
            total[r] = (double) (p1 - p0) / ops;
            caller[r] = (double) (c1 - c0) / ops;
            wall[r] = (double) (w1 - w0) / ops;
        }
        result(family, n, "ns_per_op", num(median(total)), "caller_ns_per_op", num(median(caller)),
                "wall_ns_per_op", num(median(wall)));
    }

    static void scheduleCancelAndTouch(int n, long minMs) throws InterruptedException {
        try (Wheel w = new Wheel()) {
            BackgroundDelays d = new BackgroundDelays();
            TimerTask task = t -> sink++;
            Timeout[] handles = new Timeout[n];
            for (int i = 0; i < n; ++i) handles[i] = w.timer.newTimeout(task, d.nextMs(), TimeUnit.MILLISECONDS);
            Thread.sleep(100 + n / 5_000);  // the worker moves at most 100 000 new timeouts a tick
            timeOps("schedule_cancel", n, () -> w.timer.newTimeout(task, OP_DELAY_MS, TimeUnit.MILLISECONDS).cancel(), minMs);
            ScatteredOrder order = new ScatteredOrder(n);
            timeOps("touch", n, () -> {
                int c = order.next();
                handles[c].cancel();
                handles[c] = w.timer.newTimeout(task, OP_DELAY_MS, TimeUnit.MILLISECONDS);
            }, minMs);
        }
    }

    // ---- expire -----------------------------------------------------------------------------

    static final class ExpireRound implements TimerTask {
        final int n;
        volatile int count = 0;
        long firstCpu, lastCpu, firstWall, lastWall;
        ExpireRound(int n) { this.n = n; }
        @Override public void run(Timeout t) {
            int c = count;  // only the worker writes
            if (c == 0) {
                firstCpu = THREADS.getCurrentThreadCpuTime();
                firstWall = System.nanoTime();
            }
            sink++;
            if (c + 1 == n) {
                lastCpu = THREADS.getCurrentThreadCpuTime();
                lastWall = System.nanoTime();
            }
            count = c + 1;
        }
    }

    static int maxRounds = 20;
    static int expireRounds(int n) { return Math.max(1, Math.min(maxRounds, 1_000_000 / n)); }

    // One round: N timeouts due in the middle of one tick, well after the last is scheduled.
    static double[] expireRound(Wheel w, int n) throws InterruptedException {
        ExpireRound round = new ExpireRound(n);
        long tick = TimeUnit.MILLISECONDS.toNanos(TICK_MS);
        long start = w.startTimeNs();
        long lead = TimeUnit.MILLISECONDS.toNanos(50) + 2_000L * n;
        long tickIndex = (System.nanoTime() - start + lead) / tick + 1;
        long due = start + tickIndex * tick + tick / 2;  // absolute System.nanoTime() of the deadline
        for (int i = 0; i < n; ++i) w.timer.newTimeout(round, due - System.nanoTime(), TimeUnit.NANOSECONDS);
        boolean overrun = round.count != 0 || System.nanoTime() >= due;
        long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (round.count != n && System.nanoTime() < limit) Thread.sleep(1);
        if (round.count != n) throw new IllegalStateException("expire: " + round.count + " of " + n + " ran");
        // From the start of the first task to the end of the last: (n - 1) tasks and a bit.
        double cpu = (double) (round.lastCpu - round.firstCpu) / n;
        double wall = (double) (round.lastWall - round.firstWall) / n;
        return new double[] {cpu, wall, overrun ? 1 : 0};
    }

    static void expire(int n) throws InterruptedException {
        try (Wheel w = new Wheel()) {
            Thread.sleep(50);
            expireRound(w, Math.min(n, 100_000));  // warm-up: JIT the worker's path
            int rounds = expireRounds(n);
            double cpu = 0, wall = 0;
            int overruns = 0;
            for (int r = 0; r < rounds; ++r) {
                double[] x = expireRound(w, n);
                cpu += x[0];
                wall += x[1];
                overruns += (int) x[2];
            }
            result("expire", n, "ns_per_timer", num(cpu / rounds), "wall_ns_per_timer", num(wall / rounds),
                    "rounds", Integer.toString(rounds), "overruns", Integer.toString(overruns));
        }
    }

    // ---- memory -----------------------------------------------------------------------------

    static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; ++i) {
            System.gc();
            Thread.sleep(20);
            Runtime rt = Runtime.getRuntime();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }

    static void memory(int n) throws InterruptedException {
        try (Wheel w = new Wheel()) {
            Thread.sleep(50);
            long before = usedHeapAfterGc();
            Timeout[] handles = new Timeout[n];
            for (int i = 0; i < n; ++i) {
                final long id = i;  // a task captures its session, as a real one does
                handles[i] = w.timer.newTimeout(t -> sink += id, FAR_DELAY_MS, TimeUnit.MILLISECONDS);
            }
            Thread.sleep(100 + n / 5_000);  // transferred into buckets (the queue nodes are gone)
            long after = usedHeapAfterGc();
            result("memory", n, "bytes_per_timeout", num((double) (after - before) / n),
                    "pending", Long.toString(w.timer.pendingTimeouts()));
            if (handles[n - 1].isExpired()) throw new IllegalStateException("memory: a timeout expired");
        }
    }

    // ---- idle wake-ups ----------------------------------------------------------------------

    static Path workerTask() throws IOException {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path t : tasks) {
                String comm = new String(Files.readAllBytes(t.resolve("comm"))).trim();
                if (WORKER_NAME.startsWith(comm) && !comm.isEmpty()) return t;
            }
        }
        return null;
    }

    static long voluntarySwitches(Path task) throws IOException {
        if (task == null) return -1;
        for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        }
        return -1;
    }

    static void idle(int n, long windowMs) throws InterruptedException, IOException {
        try (Wheel w = new Wheel()) {
            TimerTask task = t -> sink++;
            Timeout[] handles = new Timeout[n];
            for (int i = 0; i < n; ++i) handles[i] = w.timer.newTimeout(task, FAR_DELAY_MS, TimeUnit.MILLISECONDS);
            Thread.sleep(100 + n / 5_000);
            Path task0 = workerTask();
            long t0 = System.nanoTime(), ticks0 = w.ticks(), sw0 = voluntarySwitches(task0);
            Thread.sleep(windowMs);
            long t1 = System.nanoTime(), ticks1 = w.ticks(), sw1 = voluntarySwitches(task0);
            double s = (t1 - t0) / 1e9;
            boolean found = task0 != null && sw0 >= 0 && sw1 >= 0;
            result("idle", n, "wakeups_per_s", found ? num((sw1 - sw0) / s) : "-1", "ticks_per_s", num((ticks1 - ticks0) / s),
                    "wakeups", found ? Long.toString(sw1 - sw0) : "-1", "window_s", num(s));
            if (handles[0].isExpired()) throw new IllegalStateException("idle: a timeout expired");
        }
    }

    // ---- main -------------------------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        int[] sizes = {1_000, 10_000, 100_000, 1_000_000};
        long idleMs = 1000, minMs = 300;
        String jsonPath = null;
        for (String a : args) {
            if (a.startsWith("--sizes=")) sizes = Arrays.stream(a.substring(8).split(",")).mapToInt(Integer::parseInt).toArray();
            else if (a.startsWith("--idle_ms=")) idleMs = Long.parseLong(a.substring(10));
            else if (a.startsWith("--min_ms=")) minMs = Long.parseLong(a.substring(9));
            else if (a.startsWith("--json=")) jsonPath = a.substring(7);
            else if (a.startsWith("--max_rounds=")) maxRounds = Integer.parseInt(a.substring(13));
            else {
                System.err.println("NettyTimerBench: unknown argument " + a);
                System.exit(2);
            }
        }
        System.out.println("Netty HashedWheelTimer " + HashedWheelTimer.class.getPackage().getImplementationVersion()
                + " on Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"
                + ", tick " + TICK_MS + " ms, " + TICKS_PER_WHEEL + " buckets");
        for (int n : sizes) scheduleCancelAndTouch(n, minMs);
        for (int n : sizes) expire(n);
        for (int n : sizes) memory(n);
        for (int n : sizes) idle(n, idleMs);
        if (sink == 42) System.out.println();  // use the sink
        if (jsonPath != null) {
            try (PrintWriter out = new PrintWriter(jsonPath)) {
                out.println("[");
                for (int i = 0; i < JSON.size(); ++i) out.println("  " + JSON.get(i) + (i + 1 < JSON.size() ? "," : ""));
                out.println("]");
            }
        }
    }
}
