// stencil_test.h: the stencil kernel (stencil.cu) against an independent reference, included by
// kernel_test.cpp (which provides launch, buf, check, same, values and grid_stride_blocks).
//
// The case: a rank's block of 5 rows (global rows 1..6 of 7) along the distributed axis 0, and
// n1 columns along axis 1 (the line axis); ghost slabs of input 0 of one row on each side. Output
// 0 sums, in this order, a 5-tap band along axis 0 of input 0 (explicit rows at both ends, which
// read ghost rows, one a repeated column), a 3-tap band along axis 1 of input 0 (explicit end
// rows) and a 1-tap
// band along axis 1 of input 1: two runs of terms (inputs 0 and 1), so two launches, the second
// continuing from the first's values. Rows are one element, so the boundary rows of axis 1 are
// summed directly, the others with fused multiply-adds.

/// The length of the table's head (core/src/engine/stencils/table.rs; stencil.cu's
/// DL_STENCIL_HEAD), which this test writes independently of the kernel file.
constexpr size_t stencil_head = 13;

struct StencilBandDesc {
    size_t n, lo, hi;
    std::vector<std::pair<long, double>> taps;
    std::vector<std::vector<std::pair<size_t, double>>> rows;  // rows 0..lo, then hi..n

    const std::vector<std::pair<size_t, double>>* row(size_t g) const {
        if (g >= lo && g < hi) return nullptr;
        return &rows[g < lo ? g : lo + (g - hi)];
    }
    void pack(std::vector<double>& t) const {
        t.insert(t.end(), {double(n), double(lo), double(hi), double(taps.size())});
        for (auto& p : taps) t.insert(t.end(), {double(p.first), p.second});
        size_t first = 0;
        for (auto& r : rows) {
            t.insert(t.end(), {double(first), double(r.size())});
            first += r.size();
        }
        for (auto& r : rows)
            for (auto& e : r) t.insert(t.end(), {double(e.first), e.second});
    }
};

template <typename R> void test_stencil(const char* s) {
    const std::string S(s);
    const size_t offset = 1, n_local = 5, n0 = 7;
    for (size_t n1 : {1, 2, 37, 300}) {
        const size_t lo1 = std::min<size_t>(1, n1), hi1 = std::max(n1 > 0 ? n1 - 1 : 0, lo1);
        StencilBandDesc a{n0, 2, 5, {{-2, 0.1}, {-1, -0.7}, {0, 1.3}, {1, 0.3}, {2, -0.2}}, {}};
        a.rows = {{{0, 1.0}, {2, -0.5}}, {{0, 0.5}, {1, -1.5}, {3, 0.75}}, {{6, 2.0}, {5, -1.0}, {6, 0.5}}, {}};
        StencilBandDesc b{n1, lo1, hi1, {}, {}};
        if (hi1 > lo1) b.taps = {{-1, 0.6}, {0, -1.1}, {1, 0.45}};
        for (size_t r = 0; r < lo1 + (n1 - hi1); ++r) {
            size_t g = r < lo1 ? r : hi1 + (r - lo1);
            b.rows.push_back({{g, 0.9}, {std::min(g + 1, n1 - 1), -0.35}});
        }
        StencilBandDesc c{n1, 0, n1, {{0, 2.0 / 3.0}}, {}};
        const StencilBandDesc* bands[3] = {&a, &b, &c};
        const size_t inps[3] = {0, 0, 1}, axes[3] = {0, 1, 1};
        // The table (layout: core/src/engine/stencils/table.rs).
        std::vector<double> t(stencil_head, 0.0);
        t.insert(t.end(), {double(n_local), double(n1), double(n1), 1.0});
        const size_t pieces_at = t.size();
        const size_t pieces[2][3] = {{0, 1, 0}, {6, 1, n1}};  // start, len, at
        for (auto& p : pieces) t.insert(t.end(), {0.0, double(p[0]), double(p[1]), double(p[2]), double(n1), 1.0});
        const size_t outputs_at = t.size();
        t.insert(t.end(), {0.0, 3.0});
        const size_t terms_at = t.size();
        std::vector<double> packed;
        for (int k = 0; k < 3; ++k) {
            t.insert(t.end(), {double(inps[k]), double(axes[k]), double(terms_at + 9 + packed.size())});
            bands[k]->pack(packed);
        }
        t.insert(t.end(), packed.begin(), packed.end());
        const double head[stencil_head] = {1, 0, double(offset), double(n_local), 1, 1, 1, double(n1),
                                              2, double(pieces_at), 1, double(outputs_at), double(terms_at)};
        std::copy(head, head + stencil_head, t.begin());
        const size_t m = n_local * n1;
        const auto x0 = values<R>(m, 5), x1 = values<R>(m, 6), ghosts = values<R>(2 * n1, 7);
        // The reference: each element's sources, merged by address, in order.
        std::vector<R> want(m);
        for (size_t i = 0; i < n_local; ++i)
            for (size_t j = 0; j < n1; ++j) {
                std::vector<std::pair<long, R>> addr;  // (address, coefficient); ghosts at -1 - k
                std::vector<R> value;
                const size_t gl[2] = {i + offset, j};
                for (int k = 0; k < 3; ++k) {
                    const size_t g = gl[axes[k]];
                    std::vector<std::pair<size_t, double>> entries;
                    if (auto r = bands[k]->row(g)) entries = *r;
                    else
                        for (auto& p : bands[k]->taps) entries.push_back({size_t(long(g) + p.first), p.second});
                    for (auto& e : entries) {
                        long where;
                        R v;
                        if (axes[k] == 0 && (e.first < offset || e.first >= offset + n_local)) {
                            size_t slab = e.first < offset ? e.first : 1 + (e.first - 6);
                            where = -1 - long(slab * n1 + j);
                            v = ghosts[slab * n1 + j];
                        } else {
                            size_t li = axes[k] == 0 ? e.first - offset : i, lj = axes[k] == 1 ? e.first : j;
                            where = long(inps[k] * m + li * n1 + lj);
                            v = (inps[k] ? x1 : x0)[li * n1 + lj];
                        }
                        size_t s = 0;
                        while (s < addr.size() && addr[s].first != where) ++s;
                        if (s == addr.size()) {
                            addr.push_back({where, R(e.second)});
                            value.push_back(v);
                        } else {
                            addr[s].second = addr[s].second + R(e.second);
                        }
                    }
                }
                const bool direct = b.row(j) != nullptr;
                R acc = R(0);
                for (size_t s = 0; s < addr.size(); ++s)
                    acc = direct ? acc + addr[s].second * value[s] : ref<R>::fma(value[s], addr[s].second, acc);
                want[i * n1 + j] = acc;
            }
        // Every part as the engine splits it: all rows, or the rim then the interior.
        const std::vector<std::vector<std::pair<size_t, size_t>>> splits = {{{0, 5}}, {{0, 1}, {4, 1}, {1, 3}}};
        for (unsigned block : grid_stride_blocks())
        for (unsigned grid : {1u, 2u, 5u}) {
            for (auto& split : splits) {
                std::vector<R> got = values<R>(m, 8);
                for (auto& part : split) {
                    const dl_index n = dl_index(part.second * n1);
                    for (int run = 0; run < 2; ++run) {
                        launch("stencil_" + S, grid, block, n, dl_index(part.first), dl_index(part.second),
                               buf(t), dl_index(0), dl_index(run ? 2 : 0), dl_index(run ? 3 : 2), run ? 0 : 1,
                               buf(run ? x1 : x0), buf(ghosts), buf(got));
                    }
                }
                check(same(got, want), "stencil " + S + " n1=" + std::to_string(n1) + " grid=" +
                                           std::to_string(grid) + " block=" + std::to_string(block) +
                                           " parts=" + std::to_string(split.size()));
            }
        }
    }
}
