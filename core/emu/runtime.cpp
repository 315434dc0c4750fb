// runtime.cpp: the emulated device's launcher. See emu.h for the execution model and the checks.
// Called from Rust (core/src/cuda/emulated.rs) and by the kernel test through the C functions at
// the end.
#include "emu.h"

#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

/// Every registered kernel: the tables generated from kernels.txt, null-terminated.
extern "C" const dl_emu_kernel* const dl_emu_tables[];

namespace {

/// The barrier of the running block (threaded mode), or null (sequential mode).
thread_local std::barrier<>* block_barrier = nullptr;
/// The name of the running kernel, for messages.
thread_local const char* running = nullptr;

std::mutex launch_mutex;

/// A registered multicast range: `bytes` from `base` stand for the same bytes on every rank, at
/// `peers[q]` on rank q.
struct Multicast {
    const unsigned char* base;
    unsigned long long bytes;
    std::vector<unsigned char*> peers;
};
std::mutex multicast_mutex;
std::vector<Multicast>& multicasts() {
    static std::vector<Multicast> all;
    return all;
}
std::map<std::string, unsigned long long>& launch_counts() {
    static std::map<std::string, unsigned long long> counts;
    return counts;
}

const dl_emu_kernel* find(const char* name) {
    for (const dl_emu_kernel* const* t = dl_emu_tables; *t != nullptr; ++t)
        for (const dl_emu_kernel* k = *t; k->name != nullptr; ++k)
            if (std::strcmp(k->name, name) == 0) return k;
    return nullptr;
}

bool env_is(const char* var, const char* value) {
    const char* v = std::getenv(var);
    return v != nullptr && std::strcmp(v, value) == 0;
}

/// The order in which blocks, and the threads of a block run one at a time, are visited.
struct Order {
    enum Kind { Index, Reverse, Shuffle } kind = Index;
    std::uint64_t seed = 0;
    std::string error;
};

/// DL_EMU_ORDER, read once: `index` (or unset), `reverse`, `shuffle` or `shuffle:SEED`.
const Order& order() {
    static const Order o = [] {
        Order o;
        const char* v = std::getenv("DL_EMU_ORDER");
        std::string s = v != nullptr ? v : "";
        if (s.empty() || s == "index") return o;
        if (s == "reverse") {
            o.kind = Order::Reverse;
        } else if (s == "shuffle" || s.rfind("shuffle:", 0) == 0) {
            o.kind = Order::Shuffle;
            if (s.size() > 8) {
                char* end = nullptr;
                o.seed = std::strtoull(s.c_str() + 8, &end, 10);
                if (*end != '\0') o.error = "DL_EMU_ORDER=" + s + ": the seed is not a number";
            }
        } else {
            o.error = "DL_EMU_ORDER=" + s + ": expected index, reverse, shuffle or shuffle:SEED";
        }
        return o;
    }();
    return o;
}

/// SplitMix64: the shuffles' random numbers.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// The seed of one launch: the order's seed, the kernel's name and its launch count, so a rerun
/// with the same DL_EMU_ORDER visits the same permutations.
std::uint64_t launch_seed(const char* name, unsigned long long count) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
    for (const char* c = name; *c != '\0'; ++c) h = (h ^ std::uint64_t(*c)) * 1099511628211ull;
    return mix(order().seed ^ mix(h ^ mix(count)));
}

/// The visiting order of `n` items (blocks, or the threads of one block): 0..n in index order,
/// reversed, or a permutation drawn from `seed`.
std::vector<unsigned> permutation(unsigned n, std::uint64_t seed) {
    std::vector<unsigned> p(n);
    for (unsigned i = 0; i < n; ++i) p[i] = order().kind == Order::Reverse ? n - 1 - i : i;
    if (order().kind == Order::Shuffle) {
        for (unsigned i = n; i > 1; --i) {
            seed = mix(seed);
            std::swap(p[i - 1], p[seed % i]);
        }
    }
    return p;
}

/// The multi-index of the `i`-th item of an `extent` box, x fastest.
dim3 unflatten(unsigned i, dim3 extent) {
    return dim3{i % extent.x, (i / extent.x) % extent.y, i / (extent.x * extent.y)};
}

void run_sequential(const dl_emu_kernel* k, dim3 grid, dim3 block, void** params,
                    std::uint64_t seed) {
    blockDim = block;
    gridDim = grid;
    const unsigned threads = block.x * block.y * block.z;
    const std::vector<unsigned> blocks = permutation(grid.x * grid.y * grid.z, seed);
    std::vector<unsigned> within = permutation(threads, seed);
    for (unsigned b : blocks) {
        blockIdx = unflatten(b, grid);
        if (order().kind == Order::Shuffle) within = permutation(threads, mix(seed ^ b));
        for (unsigned t : within) {
            threadIdx = unflatten(t, block);
            k->invoke(params);
        }
    }
}

/// One host thread per CUDA thread of a block, started once per launch: each runs its thread of
/// every block in turn (all in the same block order), and a barrier at the end of each block
/// keeps blocks from overlapping (so `__shared__` statics stay private to the running block).
void run_threaded(const dl_emu_kernel* k, dim3 grid, dim3 block, void** params,
                  std::uint64_t seed) {
    const unsigned n = block.x * block.y * block.z;
    const std::vector<unsigned> blocks = permutation(grid.x * grid.y * grid.z, seed);
    std::barrier<> barrier(n);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (unsigned t = 0; t < n; ++t) {
        threads.emplace_back([&, t] {
            blockDim = block;
            gridDim = grid;
            threadIdx = unflatten(t, block);
            block_barrier = &barrier;
            running = k->name;
            for (unsigned b : blocks) {
                blockIdx = unflatten(b, grid);
                k->invoke(params);
                barrier.arrive_and_wait();
            }
            block_barrier = nullptr;
        });
    }
    for (auto& th : threads) th.join();
}

/// The name of declared pointer `i` of `k` (its `ptr_names` entry).
std::string pointer_name(const dl_emu_kernel* k, size_t i) {
    std::string names = k->ptr_names != nullptr ? k->ptr_names : "";
    size_t start = 0;
    for (size_t j = 0; j < i && start != std::string::npos; ++j) {
        start = names.find(',', start);
        if (start != std::string::npos) ++start;
    }
    if (start == std::string::npos) return "pointer " + std::to_string(i);
    return names.substr(start, names.find(',', start) - start);
}

/// kernels.txt's pointer declarations against a launch's extents: one extent per declared pointer,
/// and no written range overlapping another range (except an exact alias of an input when the
/// kernel is `inplace`). Returns a message, or "" when the launch may go ahead.
std::string check_pointers(const dl_emu_kernel* k, void** params, const dl_emu_span* spans,
                           size_t nspans) {
    if (k->ptrs == nullptr) return "";
    const size_t declared = std::strlen(k->ptrs);
    const std::string kernel = std::string("launch of ") + k->name + " refused: ";
    if (nspans != declared)
        return kernel + std::to_string(nspans) +
               " pointer arguments with their extents, kernels.txt declares " +
               std::to_string(declared) + " (ptrs=" + k->ptr_names + ")";
    struct Range {
        std::uint64_t start, bytes;
        char role;
    };
    std::vector<Range> r(nspans);
    for (size_t i = 0; i < nspans; ++i) {
        std::uint64_t addr;
        std::memcpy(&addr, params[spans[i].param], sizeof addr);
        r[i] = Range{addr, spans[i].bytes, k->ptrs[i]};
    }
    if (env_is("DL_EMU_NO_OVERLAP_CHECK", "1")) return "";
    auto describe = [&](size_t i) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "`%s` (%s, %llu bytes at %#llx)", pointer_name(k, i).c_str(),
                      r[i].role == 'r' ? "read" : r[i].role == 'w' ? "written" : "read and written",
                      (unsigned long long)r[i].bytes, (unsigned long long)r[i].start);
        return std::string(buf);
    };
    for (size_t i = 0; i < nspans; ++i)
        for (size_t j = 0; j < nspans; ++j) {
            if (i == j || r[i].role == 'r' || (j < i && r[j].role != 'r')) continue;
            const bool overlap = r[i].bytes > 0 && r[j].bytes > 0 &&
                                 r[i].start < r[j].start + r[j].bytes &&
                                 r[j].start < r[i].start + r[i].bytes;
            const bool alias = k->inplace && r[j].role == 'r' && r[i].start == r[j].start &&
                               r[i].bytes == r[j].bytes;
            if (overlap && !alias)
                return kernel + describe(i) + " overlaps " + describe(j) +
                       ": a race on a GPU (kernels.txt declares the pointers; " +
                       (k->inplace ? "`inplace` allows only an exact alias of an input)"
                                   : "no `inplace`)");
        }
    return "";
}

}  // namespace

void dl_emu_syncthreads() {
    if (block_barrier != nullptr) {
        block_barrier->arrive_and_wait();
    } else if (blockDim.x * blockDim.y * blockDim.z > 1) {
        std::fprintf(stderr,
                     "distlops emulator: kernel %s calls __syncthreads() but is not marked `sync` "
                     "in core/kernels/kernels.txt\n",
                     running != nullptr ? running : "?");
        std::abort();
    }
}

/// Launches `name` and waits for it. `spans` gives the extent of each pointer argument, in
/// parameter order. Returns 0, or 1 with a message in `err`: an
/// unknown kernel, an invalid configuration (the checks cuLaunchKernel makes), a block larger
/// than the kernel's `block=`, or pointers that break its `ptrs=` declaration.
extern "C" int dl_emu_launch(const char* name, const unsigned* grid, const unsigned* block,
                             unsigned shared_bytes, void** params, const dl_emu_span* spans,
                             size_t nspans, char* err, size_t err_len) {
    const dl_emu_kernel* k = find(name);
    auto fail = [&](const std::string& msg) {
        std::snprintf(err, err_len, "%s", msg.c_str());
        return 1;
    };
    if (k == nullptr) return fail(std::string("no kernel named ") + name);
    if (!order().error.empty()) return fail(order().error);
    dim3 g{grid[0], grid[1], grid[2]}, b{block[0], block[1], block[2]};
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
        return fail("a grid or block dimension is zero");
    if (b.x > 1024 || b.y > 1024 || b.z > 64 || b.x * b.y * b.z > 1024)
        return fail("more than 1024 threads per block");
    if (g.y > 65535 || g.z > 65535) return fail("grid y or z above 65535");
    if (shared_bytes != 0) return fail("dynamic shared memory is not supported by the emulator");
    const unsigned threads = b.x * b.y * b.z;
    if (threads > k->max_block)
        return fail(std::string("launch of ") + name + " refused: " + std::to_string(threads) +
                    " threads per block, kernels.txt declares block=" +
                    std::to_string(k->max_block) + " (its __shared__ arrays hold that many)");
    const std::string pointers = check_pointers(k, params, spans, nspans);
    if (!pointers.empty()) return fail(pointers);
    // A peer kernel waits inside its launch for the other ranks' launches of it: it may not hold
    // the lock (see emu.h); the others hold it for the whole launch.
    std::unique_lock<std::mutex> lock(launch_mutex);
    const unsigned long long count = ++launch_counts()[name];
    const std::uint64_t seed = launch_seed(name, count);
    if (k->peer) lock.unlock();
    running = k->name;
    if (k->sync || env_is("DL_EMU_THREADED", "1"))
        run_threaded(k, g, b, params, seed);
    else
        run_sequential(k, g, b, params, seed);
    running = nullptr;
    return 0;
}

extern "C" void dl_emu_poison(const void* addr, size_t bytes, int poison);

void dl_backoff() { std::this_thread::yield(); }

/// Registers `bytes` at `mc` as a multicast range of the `n` rank copies `peers` (one address
/// per rank, in rank order), and poisons the range for AddressSanitizer (it is never accessed
/// directly).
extern "C" void dl_emu_multicast_register(const void* mc, unsigned long long bytes,
                                          void* const* peers, unsigned n) {
    std::lock_guard<std::mutex> lock(multicast_mutex);
    Multicast m{static_cast<const unsigned char*>(mc), bytes, {}};
    for (unsigned q = 0; q < n; ++q) m.peers.push_back(static_cast<unsigned char*>(peers[q]));
    multicasts().push_back(std::move(m));
    dl_emu_poison(mc, bytes, 1);
}

/// Forgets the multicast range at `mc` and unpoisons it.
extern "C" void dl_emu_multicast_unregister(const void* mc) {
    std::lock_guard<std::mutex> lock(multicast_mutex);
    auto& all = multicasts();
    for (auto it = all.begin(); it != all.end(); ++it)
        if (it->base == mc) {
            dl_emu_poison(mc, it->bytes, 0);
            all.erase(it);
            return;
        }
}

unsigned char* const* dl_emu_multicast(const void* mc, unsigned long long bytes, unsigned* n,
                                       const char* what) {
    // The kernel's own addresses per rank live as long as the registration, which outlives the
    // launches on it (the heap unregisters at its collective free); one table per thread.
    thread_local std::vector<unsigned char*> at;
    const unsigned char* p = static_cast<const unsigned char*>(mc);
    {
        std::lock_guard<std::mutex> lock(multicast_mutex);
        for (const Multicast& m : multicasts())
            if (p >= m.base && p + bytes <= m.base + m.bytes) {
                at.clear();
                for (unsigned char* q : m.peers) at.push_back(q + (p - m.base));
                *n = unsigned(at.size());
                return at.data();
            }
    }
    std::fprintf(stderr,
                 "distlops emulator: kernel %s: %s on %p, which is not a multicast address (on a "
                 "GPU: an illegal address)\n",
                 running != nullptr ? running : "?", what, mc);
    std::abort();
}

/// How often `name` was launched in this process.
extern "C" unsigned long long dl_emu_launch_count(const char* name) {
    std::lock_guard<std::mutex> lock(launch_mutex);
    auto it = launch_counts().find(name);
    return it == launch_counts().end() ? 0 : it->second;
}

/// Marks `bytes` at `addr` as unaddressable (`poison` 1) or addressable again (0) for
/// AddressSanitizer, when this runtime is built with it (DL_EMU_SANITIZE=address): the emulated
/// device poisons its red zones, so a kernel touching one is reported at once, with its file and
/// line. Does nothing otherwise.
extern "C" void dl_emu_poison(const void* addr, size_t bytes, int poison) {
#ifdef __SANITIZE_ADDRESS__
    if (poison != 0)
        ASAN_POISON_MEMORY_REGION(addr, bytes);
    else
        ASAN_UNPOISON_MEMORY_REGION(addr, bytes);
#else
    (void)addr;
    (void)bytes;
    (void)poison;
#endif
}
