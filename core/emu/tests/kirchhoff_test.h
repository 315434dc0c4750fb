// kirchhoff_test.h: the Kirchhoff kernels (kirchhoff.cu) against an independent reference,
// included by kernel_test.cpp (which provides launch, buf, check, same, values, ref and
// grid_stride_blocks).
//
// The case: ns sources, nr receivers and ni image points whose summed travel times spread over
// a little more than the trace (so some land past its end and some before its last sample), on
// buffers of exactly their size, so a read or write past a table, the model or a trace
// overflows under AddressSanitizer; with DL_EMU_THREADED=1, two threads writing one value would
// be a reported race. The dynamic kernels (kirchhoff_dyn_*) run on the same case with weight
// tables of either sign, without and with an offset aperture (offsets 0 to 4 against limits 1.5
// and 3 on depth columns of ni points: all three forms of its factor).

template <typename T> void test_kirchhoff(const char* s) {
    using R = typename dl_real_of<T>::type;
    const std::string S(s);
    const double dt = 0.004;
    for (size_t ni : {1, 37, 300}) {
        const size_t ns = 2, nr = 3, nt = 23;
        std::mt19937_64 rng{ni};
        std::uniform_real_distribution<double> u(0.0, 0.6 * dt * double(nt));
        std::vector<double> src(ns * ni), rec(nr * ni);
        for (auto& t : src) t = u(rng);
        for (auto& t : rec) t = u(rng);
        if (ni > 1) rec[1] = -1.0;  // a negative time: before the trace, skipped
        const auto x = values<T>(ni, 11);
        const auto y = values<T>(ns * nr * nt, 12);
        // The references, written from the formula: the sample, the two weights, products then
        // sums in the documented order.
        auto sample = [&](double t, size_t& it, double& f) {
            const double q = t / dt;
            if (!(q >= 0.0 && q < double(nt - 1))) return false;
            it = size_t(q);
            f = q - double(it);
            return true;
        };
        std::vector<double> ps(ns * ni), qs(ns * ni), pr(nr * ni), qr(nr * ni);
        for (auto* t : {&ps, &qs, &pr, &qr})
            for (auto& v : *t) v = u(rng) / (0.3 * dt * double(nt)) - 1.0;
        std::vector<double> off(ns * nr), taper(21);
        for (size_t k = 0; k < off.size(); ++k) off[k] = double(k % 5);
        for (size_t k = 0; k < 21; ++k) taper[k] = 1.0 - double(k) / 20.0;
        const double amin = 1.5, amax = 3.0;
        // case 0: kinematic; 1: weights; 2: weights and the offset aperture.
        for (int c = 0; c < 3; ++c) {
            auto weight = [&](size_t is, size_t ir, size_t i) {
                if (c == 0) return 1.0;
                double v = ps[is * ni + i] * pr[ir * ni + i] + qs[is * ni + i] * qr[ir * ni + i];
                if (c == 1) return v;
                const double a = off[is * nr + ir] / double(i % ni + 1);
                if (a >= amax) return v * 0.0;
                if (a < amin) return v;
                const size_t k = size_t(20.0 * (a - amin) / (amax - amin));
                return v * taper[k < 20 ? k : 20];
            };
            std::vector<T> fwd(ns * nr * nt, ref<T>::zero()), adj(ni, ref<T>::zero());
            for (size_t is = 0; is < ns; ++is)
                for (size_t ir = 0; ir < nr; ++ir)
                    for (size_t i = 0; i < ni; ++i) {
                        size_t it;
                        double f;
                        if (!sample(src[is * ni + i] + rec[ir * ni + i], it, f)) continue;
                        const double w = weight(is, ir, i);
                        const R w0 = R((1.0 - f) * w), w1 = R(f * w);
                        T* tr = &fwd[(is * nr + ir) * nt];
                        tr[it] = ref<T>::add(tr[it], ref<T>::scale(x[i], w0));
                        tr[it + 1] = ref<T>::add(tr[it + 1], ref<T>::scale(x[i], w1));
                        const T* d = &y[(is * nr + ir) * nt];
                        adj[i] = ref<T>::add(adj[i], ref<T>::add(ref<T>::scale(d[it], w0),
                                                                 ref<T>::scale(d[it + 1], w1)));
                    }
            for (unsigned block : grid_stride_blocks())
                for (unsigned grid : {1u, 2u, 5u}) {
                    const std::string at = " " + S + " ni=" + std::to_string(ni) + " case=" +
                                           std::to_string(c) + " grid=" + std::to_string(grid) +
                                           " block=" + std::to_string(block);
                    std::vector<T> got_y = values<T>(ns * nr * nt, 13), got_x = values<T>(ni, 14);
                    const dl_index nz = c == 2 ? dl_index(ni) : 0;
                    if (c == 0) {
                        launch("kirchhoff_fwd_" + S, grid, block, dl_index(ns), dl_index(nr),
                               dl_index(ni), dl_index(nt), dt, buf(src), buf(rec), buf(x),
                               buf(got_y));
                        launch("kirchhoff_adj_" + S, grid, block, dl_index(ns), dl_index(nr),
                               dl_index(ni), dl_index(nt), dt, buf(src), buf(rec), buf(y),
                               buf(got_x));
                    } else {
                        launch("kirchhoff_dyn_fwd_" + S, grid, block, dl_index(ns), dl_index(nr),
                               dl_index(ni), dl_index(nt), dt, buf(src), buf(rec), buf(ps),
                               buf(qs), buf(pr), buf(qr), nz, amin, amax, buf(off), buf(taper),
                               buf(x), buf(got_y));
                        launch("kirchhoff_dyn_adj_" + S, grid, block, dl_index(ns), dl_index(nr),
                               dl_index(ni), dl_index(nt), dt, buf(src), buf(rec), buf(ps),
                               buf(qs), buf(pr), buf(qr), nz, amin, amax, buf(off), buf(taper),
                               buf(y), buf(got_x));
                    }
                    check(same(got_y, fwd), "kirchhoff_fwd" + at);
                    check(same(got_x, adj), "kirchhoff_adj" + at);
                }
        }
    }
}
