// peer_test.h: peer.cu's device-initiated all-reduce between emulated ranks, included by
// kernel_test.cpp (which provides try_launch, buf, check, kernel and grid_stride_blocks).
//
// Each rank is a host thread with its own data and signal parts, as the emulated symmetric heap
// gives them on Threads; the ranks launch the kernel concurrently (kernels marked `peer` run
// outside the launcher's lock), three epochs in a row on the same parts (so the `done` signals
// that let a rank overwrite its part are exercised), with inputs whose sum depends on the order,
// and every rank's result must be the sum in rank order, bit for bit; a fourth epoch in which the
// last rank passes one element less must report the mismatch on every rank. The multicast path runs
// the same with multicast ranges registered as the heap registers them. Under ThreadSanitizer a
// peer read that the signals do not order is a reported race.

extern "C" void dl_emu_multicast_register(const void* mc, unsigned long long bytes,
                                          void* const* peers, unsigned n);
extern "C" void dl_emu_multicast_unregister(const void* mc);

/// Rank r's input of epoch e: values of very different sizes, so the order of the sum shows.
template <typename R> R peer_input(int r, size_t i, int e) {
    const double scale[] = {1e16, 1.0, -1e16, 3.0};
    return R(scale[r % 4] * (1.0 + 0.125 * double(i % 7)) + double(e) + 0.5 * double(r));
}

template <typename R> void test_peer(const char* s) {
    const std::string S(s);
    const int epochs = 3;  // then one with a wrong length
    for (bool multicast : {false, true}) {
        const std::string name = (multicast ? "multicast_all_reduce_" : "peer_all_reduce_") + S;
        for (unsigned block : grid_stride_blocks()) {
            if (block > kernel(name).max_block) continue;
            for (int ranks = 1; ranks <= 4; ++ranks) {
                const size_t n = 37 + size_t(ranks) * 41;  // more elements than a block's threads
                std::vector<std::vector<R>> data(ranks, std::vector<R>(n)), in(ranks, std::vector<R>(n));
                std::vector<std::vector<R>> out(ranks, std::vector<R>(n * epochs));
                const size_t words = std::max<size_t>(2 * size_t(ranks), 4);
                std::vector<std::vector<unsigned long long>> signals(ranks, std::vector<unsigned long long>(words, 0));
                // The multicast ranges (one per rank and part, never accessed directly).
                std::vector<std::vector<unsigned long long>> mc_data(ranks, std::vector<unsigned long long>(n)),
                    mc_signals(ranks, std::vector<unsigned long long>(words));
                std::vector<void*> data_parts, signal_parts;
                for (int q = 0; q < ranks; ++q) {
                    data_parts.push_back(data[q].data());
                    signal_parts.push_back(signals[q].data());
                }
                std::vector<std::vector<unsigned long long>> tables(ranks);
                for (int r = 0; r < ranks; ++r) {
                    auto addr = [](const void* p) { return (unsigned long long)(uintptr_t)p; };
                    if (multicast) {
                        dl_emu_multicast_register(mc_data[r].data(), n * sizeof(R), data_parts.data(), ranks);
                        dl_emu_multicast_register(mc_signals[r].data(), words * 8, signal_parts.data(), ranks);
                        tables[r] = {addr(data[r].data()), addr(signals[r].data()), addr(mc_data[r].data()),
                                     addr(mc_signals[r].data())};
                    } else {
                        for (int q = 0; q < ranks; ++q) tables[r].push_back(addr(data[q].data()));
                        for (int q = 0; q < ranks; ++q) tables[r].push_back(addr(signals[q].data()));
                    }
                }
                std::vector<std::string> errors(ranks);
                std::vector<std::vector<long long>> statuses(ranks);
                std::vector<std::thread> threads;
                for (int r = 0; r < ranks; ++r)
                    threads.emplace_back([&, r] {
                        std::vector<R> result(n);
                        std::vector<long long> status(1, -1);
                        for (int e = 1; e <= epochs + 1 && errors[r].empty(); ++e) {
                            for (size_t i = 0; i < n; ++i) in[r][i] = peer_input<R>(r, i, e);
                            const unsigned long long epoch = e;
                            // The last epoch: the last rank (of two or more) passes n - 1.
                            const size_t len = e > epochs && r == ranks - 1 && ranks > 1 ? n - 1 : n;
                            errors[r] = multicast
                                ? try_launch(name, 1, block, dl_index(len), ranks, epoch, buf(tables[r]),
                                             buf(in[r], 0, len), buf(result, 0, len), buf(status))
                                : try_launch(name, 1, block, dl_index(len), r, ranks, epoch, buf(tables[r]),
                                             buf(in[r], 0, len), buf(result, 0, len), buf(status));
                            statuses[r].push_back(status[0]);
                            if (e <= epochs) std::copy(result.begin(), result.end(), out[r].begin() + (e - 1) * n);
                        }
                    });
                for (auto& t : threads) t.join();
                if (multicast)
                    for (int r = 0; r < ranks; ++r) {
                        dl_emu_multicast_unregister(mc_data[r].data());
                        dl_emu_multicast_unregister(mc_signals[r].data());
                    }
                size_t wrong = 0;
                for (int r = 0; r < ranks; ++r)
                    for (int e = 1; e <= epochs; ++e)
                        for (size_t i = 0; i < n; ++i) {
                            R want = peer_input<R>(0, i, e);
                            for (int q = 1; q < ranks; ++q) want = want + peer_input<R>(q, i, e);
                            wrong += std::memcmp(&want, &out[r][(e - 1) * n + i], sizeof(R)) != 0;
                        }
                const std::string what = name + " with " + std::to_string(ranks) + " ranks, block " +
                                         std::to_string(block);
                for (int r = 0; r < ranks; ++r) {
                    check(errors[r].empty(), what + ": " + errors[r]);
                    const std::vector<long long> want_status = {0, 0, 0, ranks > 1 ? 1 : 0};
                    check(statuses[r] == want_status,
                          what + ": rank " + std::to_string(r) + " reports a length mismatch exactly in the last epoch");
                }
                check(wrong == 0, what + ": " + std::to_string(wrong) + " sums differ from the rank-order sum");
            }
        }
    }
}
