// kernel_test.cpp: every kernel of core/kernels, launched through the emulator's launcher
// (dl_emu_launch, the path the Rust engine takes) at sizes that are not multiples of the block
// size, with 1, 2 and several blocks of every size the engine uses and more, on buffers of exactly
// their size, and compared bit for bit with references written here independently.
//
// The kernels are compiled as the Rust build compiles them: the registry generated from
// kernels.txt (core/emu/gen_registry.rs), one translation unit per kernel file, so the launcher
// makes the same checks (block=, ptrs=) and this test sees every kernel of the manifest.
// scripts/test-kernels.sh builds it with AddressSanitizer (an access one element past a buffer, or
// past a `__shared__` array sized for a smaller block, is reported with the kernel's file and
// line) and runs it in index, reversed and shuffled order (DL_EMU_ORDER), and with
// ThreadSanitizer (with DL_EMU_THREADED=1 every CUDA thread is a host thread, so a missing
// __syncthreads is a reported data race). Last, every registered entry point must have been
// launched.
//
// KERNEL_TEST_BLOCKS lists the block sizes of the grid-stride kernels (default 1,32,256,1024: one
// thread, a warp, the engine's BLOCK, CUDA's largest); block-reduction kernels run with every
// power of two up to their `block=`.
#include "emu.h"
#include "common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" const dl_emu_kernel* const dl_emu_tables[];
extern "C" int dl_emu_launch(const char* name, const unsigned* grid, const unsigned* block,
                             unsigned shared_bytes, void** params, const dl_emu_span* spans,
                             size_t nspans, char* err, size_t err_len);
extern "C" unsigned long long dl_emu_launch_count(const char* name);

namespace {

int passed = 0, failed = 0;

void check(bool ok, const std::string& what) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::printf("FAILED: %s\n", what.c_str());
    }
}

/// elementwise.cu's dl_strides, as the Rust engine passes it (KernelArg::Strides).
struct strides_arg {
    dl_index ndim, extent[8], src[8], dst[8];
};

/// A pointer argument with its extent: `n` elements at `p` (a dl_emu_span for the launcher).
template <typename T> struct dev {
    T* p;
    size_t n;
};
template <typename T> dev<T> buf(const std::vector<T>& v) { return {const_cast<T*>(v.data()), v.size()}; }
template <typename T> dev<T> buf(const std::vector<T>& v, size_t first, size_t n) {
    return {const_cast<T*>(v.data()) + first, n};
}

template <typename A> void* slot(A& a) { return &a; }
template <typename T> void* slot(dev<T>& a) { return &a.p; }
template <typename A> void note(std::vector<dl_emu_span>&, unsigned, const A&) {}
template <typename T> void note(std::vector<dl_emu_span>& spans, unsigned i, const dev<T>& a) {
    spans.push_back(dl_emu_span{i, a.n * sizeof(T)});
}

/// Launches `name` with one pointer per argument, as cuLaunchKernel's kernelParams, and the
/// extents of its pointer arguments; returns the launcher's error, or "".
template <typename... A>
std::string try_launch(const std::string& name, unsigned grid, unsigned block, A... args) {
    void* params[] = {slot(args)...};
    std::vector<dl_emu_span> spans;
    unsigned i = 0;
    (note(spans, i++, args), ...);
    unsigned g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    char err[512] = {0};
    if (dl_emu_launch(name.c_str(), g, b, 0, params, spans.data(), spans.size(), err, sizeof err) != 0)
        return err;
    return "";
}

template <typename... A> void launch(const std::string& name, unsigned grid, unsigned block, A... args) {
    std::string err = try_launch(name, grid, block, args...);
    if (!err.empty()) check(false, "launch " + name + ": " + err);
}

/// The kernel's registry entry.
const dl_emu_kernel& kernel(const std::string& name) {
    for (const dl_emu_kernel* const* t = dl_emu_tables; *t != nullptr; ++t)
        for (const dl_emu_kernel* k = *t; k->name != nullptr; ++k)
            if (name == k->name) return *k;
    std::printf("FAILED: %s is not registered\n", name.c_str());
    std::exit(1);
}

/// KERNEL_TEST_BLOCKS (default 1,32,256,1024).
std::vector<unsigned> grid_stride_blocks() {
    const char* v = std::getenv("KERNEL_TEST_BLOCKS");
    std::istringstream list(v != nullptr ? v : "1,32,256,1024");
    std::vector<unsigned> out;
    std::string item;
    while (std::getline(list, item, ',')) out.push_back(unsigned(std::stoul(item)));
    return out;
}

// Independent references: scalars as (re, im) pairs.
template <typename T> struct ref;
template <> struct ref<float> {
    static float make(double re, double) { return float(re); }
    static float add(float a, float b) { return a + b; }
    static float sub(float a, float b) { return a - b; }
    static float mul(float a, float b) { return a * b; }
    static float div(float a, float b) { return a / b; }
    static float conj(float a) { return a; }
    static float abs2(float a) { return a * a; }
    static float abs(float a) { return std::fabs(a); }
    static float zero() { return 0.0f; }
    static float scale(float a, float c) { return a * c; }
    static float fma(float a, float c, float acc) { return std::fmaf(a, c, acc); }
};
template <> struct ref<double> {
    static double make(double re, double) { return re; }
    static double add(double a, double b) { return a + b; }
    static double sub(double a, double b) { return a - b; }
    static double mul(double a, double b) { return a * b; }
    static double div(double a, double b) { return a / b; }
    static double conj(double a) { return a; }
    static double abs2(double a) { return a * a; }
    static double abs(double a) { return std::fabs(a); }
    static double zero() { return 0.0; }
    static double scale(double a, double c) { return a * c; }
    static double fma(double a, double c, double acc) { return std::fma(a, c, acc); }
};
template <typename C, typename R> struct ref_complex {
    static C make(double re, double im) { return C{R(re), R(im)}; }
    static C add(C a, C b) { return C{a.re + b.re, a.im + b.im}; }
    static C sub(C a, C b) { return C{a.re - b.re, a.im - b.im}; }
    static C mul(C a, C b) { return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
    static C div(C a, C b) {
        R n = b.re * b.re + b.im * b.im;
        return C{(a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n};
    }
    static C conj(C a) { return C{a.re, -a.im}; }
    static R abs2(C a) { return a.re * a.re + a.im * a.im; }
    static R abs(C a) { return std::hypot(a.re, a.im); }
    static C zero() { return C{R(0), R(0)}; }
    static C scale(C a, R c) { return C{a.re * c, a.im * c}; }
    static C fma(C a, R c, C acc) { return C{ref<R>::fma(a.re, c, acc.re), ref<R>::fma(a.im, c, acc.im)}; }
};
template <> struct ref<c32> : ref_complex<c32, float> {};
template <> struct ref<c64> : ref_complex<c64, double> {};

template <typename T> bool same(const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }
template <typename T> bool same(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T> std::vector<T> values(size_t n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> v(n);
    for (auto& x : v) {
        double re = u(rng), im = u(rng);
        x = ref<T>::make(re, im);
    }
    return v;
}

/// The fixed summation pattern: term i into accumulator i % 8, then pairwise.
template <typename V> V pattern(const std::vector<V>& terms) {
    V acc[8];
    for (auto& a : acc) a = ref<V>::zero();
    for (size_t i = 0; i < terms.size(); ++i) acc[i % 8] = ref<V>::add(acc[i % 8], terms[i]);
    for (int half = 4; half > 0; half /= 2)
        for (int i = 0; i < half; ++i) acc[i] = ref<V>::add(acc[i], acc[i + half]);
    return acc[0];
}

template <typename T> void test_type(const char* s) {
    using R = typename dl_real_of<T>::type;
    const std::string S(s);
    for (size_t n : {1, 37, 255, 257, 1000}) {
        const dl_index N = dl_index(n);
        for (unsigned block : grid_stride_blocks())
        for (unsigned grid : {1u, 2u, 5u}) {
            const std::string at = " " + S + " n=" + std::to_string(n) + " grid=" + std::to_string(grid) +
                                   " block=" + std::to_string(block);
            auto x = values<T>(n, 1), y = values<T>(n, 2);
            T alpha = ref<T>::make(0.7, -0.3), beta = ref<T>::make(-1.1, 0.2);

            std::vector<T> out(n), expect(n);
            launch("fill_" + S, grid, block, N, alpha, buf(out));
            check(same(out, std::vector<T>(n, alpha)), "fill" + at);

            out = y;
            launch("scale_" + S, grid, block, N, alpha, buf(out));
            for (size_t i = 0; i < n; ++i) expect[i] = ref<T>::mul(y[i], alpha);
            check(same(out, expect), "scale" + at);

            out = y;
            launch("axpy_" + S, grid, block, N, alpha, buf(x), buf(out));
            for (size_t i = 0; i < n; ++i) expect[i] = ref<T>::add(y[i], ref<T>::mul(alpha, x[i]));
            check(same(out, expect), "axpy" + at);

            out = y;
            launch("axpby_" + S, grid, block, N, alpha, buf(x), beta, buf(out));
            for (size_t i = 0; i < n; ++i)
                expect[i] = ref<T>::add(ref<T>::mul(alpha, x[i]), ref<T>::mul(beta, y[i]));
            check(same(out, expect), "axpby" + at);

            for (int op = 0; op < 4; ++op) {
                launch("binary_" + S, grid, block, N, op, buf(x), buf(y), buf(out));
                for (size_t i = 0; i < n; ++i)
                    expect[i] = op == 0 ? ref<T>::add(x[i], y[i]) : op == 1 ? ref<T>::sub(x[i], y[i])
                                : op == 2 ? ref<T>::mul(x[i], y[i]) : ref<T>::div(x[i], y[i]);
                check(same(out, expect), "binary op " + std::to_string(op) + at);
            }

            // A diagonal of 1 (inner n) or n (inner 1) entries; exact-size buffers, so a read of
            // d past its length is a heap overflow under ASan.
            for (size_t nd : {size_t(1), n}) {
                const size_t inner = n / nd;
                std::vector<T> d(x.begin(), x.begin() + nd);
                launch("diag_mul_" + S, grid, block, N, dl_index(nd), dl_index(inner), buf(d), buf(y),
                       buf(out));
                for (size_t i = 0; i < n; ++i) expect[i] = ref<T>::mul(d[(i / inner) % nd], y[i]);
                check(same(out, expect), "diag_mul nd=" + std::to_string(nd) + at);
            }

            // Shrink, the separable proximal maps: soft (without and with weights, w of exactly
            // n elements, not passed at all without them), hard, the box and Huber, on values
            // with an exact zero, against the formulas of distlops_core::Shrink.
            {
                constexpr bool real = std::is_same_v<T, R>;
                auto xs = values<T>(n, 5);
                xs[0] = ref<T>::zero();
                const auto ws = values<T>(n, 6);
                auto re = [](T v) -> R {
                    if constexpr (real) return v; else return v.re;
                };
                auto soft = [&](T v, R t) -> T {
                    R a = ref<T>::abs(v), d = a - t;
                    d = d > R(0) ? d : R(0);
                    if constexpr (real) {
                        R sign = v > R(0) ? R(1) : v < R(0) ? R(-1) : v;
                        return d * sign;
                    } else {
                        return a == R(0) ? ref<T>::zero() : ref<T>::scale(v, d / a);
                    }
                };
                auto clip = [](R v, R lo, R hi) { return v < lo ? lo : v > hi ? hi : v; };
                const R t = R(0.4), lo = R(-0.3), hi = R(0.6), level = R(0.9);
                for (int op = 0; op < 5; ++op) {
                    const bool weighted = op == 4;
                    std::vector<T> got = xs, want(n);
                    const dev<T> w = weighted ? buf(ws) : dev<T>{nullptr, 0};
                    const int code = weighted ? 0 : op;
                    const R a = code == 2 ? lo : t, b = code == 2 ? hi : code == 3 ? level : R(0);
                    launch("shrink_" + S, grid, block, N, code, a, b, w, dl_index(weighted ? n : 0),
                           buf(got));
                    for (size_t i = 0; i < n; ++i) {
                        const T v = xs[i];
                        if (code == 0) {
                            want[i] = soft(v, weighted ? t * re(ws[i]) : t);
                        } else if (code == 1) {
                            want[i] = ref<T>::abs(v) <= t ? ref<T>::zero() : v;
                        } else if (code == 2) {
                            if constexpr (real) want[i] = clip(v, lo, hi);
                            else want[i] = T{clip(v.re, lo, hi), clip(v.im, lo, hi)};
                        } else {
                            R m = ref<T>::abs(v);
                            want[i] = ref<T>::scale(v, R(1) - t / (m > level ? m : level));
                        }
                    }
                    check(same(got, want), "shrink op " + std::to_string(op) + at);
                }
            }

            // The group maps of L21: the squares of three parts summed into acc (exactly n reals)
            // part by part, then each part scaled by the factor of its element's length, for
            // shrink and project, at a level and at zero.
            {
                const std::vector<std::vector<T>> parts = {values<T>(n, 7), values<T>(n, 8), values<T>(n, 9)};
                std::vector<R> acc(n, R(0)), want_acc(n, R(0));
                for (const auto& part : parts) {
                    launch("abs2_add_" + S, grid, block, N, buf(part), buf(acc));
                    for (size_t i = 0; i < n; ++i) want_acc[i] = want_acc[i] + ref<T>::abs2(part[i]);
                }
                check(same(acc, want_acc), "abs2_add" + at);
                for (int op = 0; op < 2; ++op)
                    for (R level : {R(0), R(0.9)}) {
                        std::vector<T> got = parts[1], want(n);
                        launch("group_scale_" + S, grid, block, N, op, level, buf(acc), buf(got));
                        for (size_t i = 0; i < n; ++i) {
                            R len = std::sqrt(want_acc[i]), m = len > level ? len : level;
                            R f = op == 0 ? (level == R(0) ? R(1) : R(1) - level / m)
                                          : (level == R(0) ? R(0) : level / m);
                            want[i] = ref<T>::scale(parts[1][i], f);
                        }
                        check(same(got, want), "group_scale op " + std::to_string(op) + at);
                    }
            }

            // Strided copy: the transpose of y seen as (rows x cols) with cols = 3 (rows = n / 3),
            // into a buffer of exactly rows * cols elements.
            {
                const size_t cols = 3, rows = n / cols, m = rows * cols;
                strides_arg st{};
                st.ndim = 2;
                st.extent[0] = dl_index(cols), st.extent[1] = dl_index(rows);
                st.src[0] = 1, st.src[1] = dl_index(cols);
                st.dst[0] = dl_index(rows), st.dst[1] = 1;
                std::vector<T> t(m), want(m);
                launch("strided_copy_" + S, grid, block, dl_index(m), st, buf(y), buf(t));
                for (size_t r = 0; r < rows; ++r)
                    for (size_t c = 0; c < cols; ++c) want[c * rows + r] = y[r * cols + c];
                check(same(t, want), "strided_copy" + at);

                // Strided add: the same box added onto x's first m values, y's value first.
                std::vector<T> sum(x.begin(), x.begin() + m);
                launch("strided_add_" + S, grid, block, dl_index(m), st, buf(y), buf(sum));
                for (size_t r = 0; r < rows; ++r)
                    for (size_t c = 0; c < cols; ++c)
                        want[c * rows + r] = ref<T>::add(x[c * rows + r], y[r * cols + c]);
                check(same(sum, want), "strided_add" + at);
            }

            // Band: (outer 3, n rows, inner 2) from n + 3 source rows, four taps through a shift
            // of 1 with the valid rows 1..n + 2 (taps outside dropped), explicit rows 0 and n - 1;
            // buffers of exactly their size, so a read past x or the table overflows under ASan.
            {
                const size_t outer = 3, inner = 2, n_src = n + 3, m = outer * n * inner;
                const double taps[4][2] = {{-1, 0.25}, {0, 1.5}, {1, -0.75}, {2, 0.125}};
                std::vector<double> table = {4, 1, 1, double(n_src - 1), n > 1 ? 2.0 : 1.0, 0};
                for (auto& t : taps) table.insert(table.end(), {t[0], t[1]});
                table.insert(table.end(), {0, 0, 2});
                if (n > 1) table.insert(table.end(), {double(n - 1), 2, 1});
                table.insert(table.end(), {0, -1.0, double(n_src - 1), 3.0});
                if (n > 1) table.insert(table.end(), {1, 0.5});
                auto xs = values<T>(outer * n_src * inner, 3);
                const auto start = values<T>(m, 4);
                for (int acc = 0; acc < 4; ++acc) {
                    const bool fused = acc >= 2;
                    table[5] = fused ? 1.0 : 0.0;
                    std::vector<T> got = start, want(m);
                    launch("band_" + S, grid, block, dl_index(m), dl_index(n), dl_index(n_src),
                           dl_index(inner), buf(table), acc % 2, buf(xs), buf(got));
                    for (size_t o = 0; o < outer; ++o)
                        for (size_t i = 0; i < n; ++i)
                            for (size_t k = 0; k < inner; ++k) {
                                auto src = [&](size_t row) { return xs[(o * n_src + row) * inner + k]; };
                                auto add = [&](T sum, size_t row, double c) {
                                    return fused ? ref<T>::fma(src(row), R(c), sum)
                                                 : ref<T>::add(sum, ref<T>::scale(src(row), R(c)));
                                };
                                T sum = ref<T>::zero();
                                if (i == 0) {
                                    sum = add(sum, 0, -1.0);
                                    sum = add(sum, n_src - 1, 3.0);
                                } else if (i == n - 1) {
                                    sum = add(sum, 1, 0.5);
                                } else {
                                    for (auto& t : taps) {
                                        long j = long(i) + 1 + long(t[0]);
                                        if (j >= 1 && j < long(n_src - 1)) sum = add(sum, size_t(j), t[1]);
                                    }
                                }
                                size_t idx = (o * n + i) * inner + k;
                                want[idx] = acc % 2 ? ref<T>::add(start[idx], sum) : sum;
                            }
                    check(same(got, want), "band accumulate=" + std::to_string(acc % 2) +
                                               " fused=" + std::to_string(fused) + at);
                }
            }

            if constexpr (std::is_same_v<T, c32> || std::is_same_v<T, c64>) {
                out = y;
                launch("conj_" + S, grid, block, N, buf(out));
                for (size_t i = 0; i < n; ++i) expect[i] = ref<T>::conj(y[i]);
                check(same(out, expect), "conj" + at);
            }

            for (dl_index chunk : {dl_index(1), dl_index(64)}) {
                size_t n_out = (n + size_t(chunk) - 1) / size_t(chunk);
                for (int cj = 0; cj < 2; ++cj) {
                    std::vector<T> got(n_out), want(n_out);
                    launch("leaf_dot_" + S, grid, block, dl_index(n_out), chunk, N, cj, buf(x), buf(y),
                           buf(got));
                    for (size_t j = 0; j < n_out; ++j) {
                        std::vector<T> terms;
                        for (size_t k = j * chunk; k < std::min(n, (j + 1) * size_t(chunk)); ++k)
                            terms.push_back(ref<T>::mul(cj ? ref<T>::conj(x[k]) : x[k], y[k]));
                        want[j] = pattern(terms);
                    }
                    check(same(got, want), "leaf_dot conj=" + std::to_string(cj) + " chunk=" + std::to_string(chunk) + at);
                }
                std::vector<R> got(n_out), want(n_out);
                launch("leaf_abs2_" + S, grid, block, dl_index(n_out), chunk, N, buf(x), buf(got));
                for (size_t j = 0; j < n_out; ++j) {
                    std::vector<R> terms;
                    for (size_t k = j * chunk; k < std::min(n, (j + 1) * size_t(chunk)); ++k)
                        terms.push_back(ref<T>::abs2(x[k]));
                    want[j] = pattern(terms);
                }
                check(same(got, want), "leaf_abs2 chunk=" + std::to_string(chunk) + at);
            }

            size_t n_out = (n + 63) / 64;
            std::vector<T> sums(n_out), want(n_out);
            launch("node_sum_" + S, grid, block, dl_index(n_out), N, buf(x), buf(sums));
            for (size_t j = 0; j < n_out; ++j)
                want[j] = pattern(std::vector<T>(x.begin() + j * 64, x.begin() + std::min(n, j * 64 + 64)));
            check(same(sums, want), "node_sum" + at);

            std::vector<dl_index> index(n);
            for (size_t i = 0; i < n; ++i) index[i] = dl_index((i * 7919) % n);
            launch("gather_" + S, grid, block, N, buf(index), buf(x), buf(out));
            for (size_t i = 0; i < n; ++i) expect[i] = x[size_t(index[i])];
            check(same(out, expect), "gather" + at);
        }
        // The block reduction, with every power of two up to its block= (the engine's
        // SYNC_BLOCK among them), once per size: its __shared__ tree must hold the block.
        const unsigned grid = 3;
        for (unsigned sync_block = 1; sync_block <= kernel("max_abs_" + S).max_block; sync_block *= 2) {
            for (bool nan : {false, true}) {
                auto v = values<T>(n, 1);
                if (nan) v[n / 2] = ref<T>::make(std::nan(""), 0.0);
                std::vector<R> partial(grid), want_p(grid, R(0));
                launch("max_abs_" + S, grid, sync_block, N, buf(v), buf(partial));
                for (size_t i = 0; i < n; ++i) {
                    size_t b = (i % (size_t(grid) * sync_block)) / sync_block;
                    R a = ref<T>::abs(v[i]);
                    if (a > want_p[b] || a != a) want_p[b] = a;
                }
                check(same(partial, want_p), "max_abs block=" + std::to_string(sync_block) +
                                                 (nan ? " with NaN" : "") + " " + S + " n=" + std::to_string(n));
            }
        }
    }
}

/// The canonical sum tree as the engine evaluates it: leaf_dot in chunks of 64 terms, then
/// node_sum level after level down to one value, each level in a buffer of exactly its size and
/// with the engine's grid (BLOCK threads, enough blocks for one node each), at sizes with a
/// second and a third level of node sums.
template <typename T> void test_tree(const char* s) {
    const std::string S(s);
    const unsigned block = 256;
    auto grid_for = [&](size_t items) { return unsigned(std::min<size_t>((items + block - 1) / block, 65535)); };
    for (size_t n : {size_t(4097), size_t(12289), size_t(262145)}) {
        const std::string at = " " + S + " n=" + std::to_string(n);
        auto x = values<T>(n, 5), y = values<T>(n, 6);
        std::vector<T> want((n + 63) / 64), got(want.size());
        for (size_t j = 0; j < want.size(); ++j) {
            std::vector<T> terms;
            for (size_t k = j * 64; k < std::min(n, j * 64 + 64); ++k) terms.push_back(ref<T>::mul(x[k], y[k]));
            want[j] = pattern(terms);
        }
        launch("leaf_dot_" + S, grid_for(got.size()), block, dl_index(got.size()), dl_index(64), dl_index(n), 0,
               buf(x), buf(y), buf(got));
        check(same(got, want), "tree leaves" + at);
        int levels = 0;
        while (want.size() > 1) {
            std::vector<T> up((want.size() + 63) / 64), want_up(up.size());
            for (size_t j = 0; j < up.size(); ++j)
                want_up[j] = pattern(std::vector<T>(want.begin() + j * 64, want.begin() + std::min(want.size(), j * 64 + 64)));
            launch("node_sum_" + S, grid_for(up.size()), block, dl_index(up.size()), dl_index(got.size()), buf(got),
                   buf(up));
            ++levels;
            check(same(up, want_up), "tree node_sum level " + std::to_string(levels + 1) + at);
            got = up;
            want = want_up;
        }
        check(levels >= (n > 64 * 64 * 64 ? 3 : 2), "the tree of" + at + " has its node_sum levels");
    }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The launcher's checks of kernels.txt's declarations: a block above `block=`, written ranges
/// overlapping other ranges (an exact in-place alias only where `inplace` allows it; inputs may
/// overlap each other), a pointer passed without its extent.
void test_launch_checks() {
    const unsigned max = kernel("max_abs_f64").max_block;
    std::vector<double> a(100, 1.5), b(100, 2.5), partial(1), sums(2);
    if (2 * max <= 1024) {
        std::string err = try_launch("max_abs_f64", 1, 2 * max, dl_index(100), buf(a), buf(partial));
        check(contains(err, "max_abs_f64") && contains(err, "block=" + std::to_string(max)),
              "a block above block= is refused, naming the kernel: `" + err + "`");
    }
    std::string err = try_launch("axpy_f64", 1, 32, dl_index(100), 2.0, buf(a), buf(a));
    check(contains(err, "axpy_f64") && contains(err, "`y`") && contains(err, "`x`"),
          "axpy with y = x is refused, naming both: `" + err + "`");
    err = try_launch("node_sum_f64", 1, 32, dl_index(2), dl_index(100), buf(a), buf(a, 0, 2));
    check(contains(err, "node_sum_f64") && contains(err, "`out`") && contains(err, "`in`"),
          "node_sum writing into its input is refused: `" + err + "`");
    err = try_launch("binary_f64", 1, 32, dl_index(99), 0, buf(a, 0, 99), buf(b, 0, 99), buf(a, 1, 99));
    check(contains(err, "binary_f64") && contains(err, "inplace"),
          "binary with an output shifted by one from an input is refused: `" + err + "`");
    err = try_launch("binary_f64", 1, 32, dl_index(100), 0, buf(a), buf(b), buf(a));
    check(err.empty() && a[99] == 4.0, "binary in place (out = x, `inplace`) runs: `" + err + "`");
    err = try_launch("leaf_dot_f64", 1, 32, dl_index(2), dl_index(64), dl_index(100), 0, buf(a), buf(a),
                     buf(sums));
    check(err.empty(), "leaf_dot with x = y (inputs may overlap) runs: `" + err + "`");
    err = try_launch("fill_f64", 1, 32, dl_index(100), 1.0, a.data());
    check(contains(err, "fill_f64") && contains(err, "declares 1"),
          "a pointer passed without its extent is refused: `" + err + "`");
}

#include "stencil_test.h"
#include "kirchhoff_test.h"
#include "peer_test.h"

}  // namespace

int main() {
    // Line-buffered, so a run cut by its time limit still shows the checks that failed so far.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    // KERNEL_TEST_ONLY=peer: only the peer kernels (the deliberate-fault runs of
    // scripts/test-kernels.sh --faults), without the check that every kernel ran.
    const char* only = std::getenv("KERNEL_TEST_ONLY");
    if (only != nullptr && std::string(only) == "peer") {
        test_peer<float>("f32");
        test_peer<double>("f64");
        std::printf("%d passed, %d failed\n", passed, failed);
        return failed == 0 ? 0 : 1;
    }
    test_launch_checks();
    test_type<float>("f32");
    test_type<double>("f64");
    test_type<c32>("c32");
    test_type<c64>("c64");
    test_stencil<float>("f32");
    test_stencil<double>("f64");
    test_kirchhoff<float>("f32");
    test_kirchhoff<double>("f64");
    test_kirchhoff<c32>("c32");
    test_kirchhoff<c64>("c64");
    test_tree<float>("f32");
    test_tree<double>("f64");
    test_tree<c32>("c32");
    test_tree<c64>("c64");
    test_peer<float>("f32");
    test_peer<double>("f64");
    // Every entry point of the manifest (the generated registry) ran.
    for (const dl_emu_kernel* const* t = dl_emu_tables; *t != nullptr; ++t)
        for (const dl_emu_kernel* k = *t; k->name != nullptr; ++k)
            check(dl_emu_launch_count(k->name) > 0, std::string("kernel ") + k->name + " was never launched");
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
