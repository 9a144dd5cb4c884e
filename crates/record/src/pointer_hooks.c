/* Linked into every program that `tramp cc` builds (docs/formats/capture.md,
 * "Pointer traces"). The compiler calls a hook before each memory access of
 * the instrumented code; the 8-byte ones forward the address and the
 * instruction (their own return address) through tramp_pointer_hooks,
 * whose pointers stay null unless tramp's capture library, preloaded by
 * `tramp record --pointers`, fills them in. The others do nothing, so the
 * program also runs on its own. This file is compiled without
 * instrumentation. */

#ifdef __cplusplus
extern "C" { /* g++ and clang++ compile this file as C++: keep C names */
#endif

typedef void (*tramp_hook)(unsigned long addr, unsigned long ip);

struct tramp_pointer_hooks {
    unsigned long long magic; /* "TPtramp1": the layout the library knows */
    tramp_hook load8;
    tramp_hook store8;
};

__attribute__((visibility("default"), used))
struct tramp_pointer_hooks tramp_pointer_hooks = {0x31706d6172745054ULL, 0, 0};

#define TRAMP_HOOK(name, which)                                              \
    __attribute__((visibility("default"), noinline)) void name(unsigned long addr) { \
        tramp_hook h = *(tramp_hook volatile *)&tramp_pointer_hooks.which;  \
        if (h)                                                               \
            h(addr, (unsigned long)__builtin_return_address(0));             \
    }
#define TRAMP_NOP(name)                                                      \
    __attribute__((visibility("default"))) void name(unsigned long addr) { (void)addr; }
#define TRAMP_NOP_N(name)                                                    \
    __attribute__((visibility("default"))) void name(unsigned long addr, unsigned long n) { \
        (void)addr; (void)n; }

/* gcc: -fsanitize=thread --param=tsan-instrument-func-entry-exit=0, compiled
 * with -c (the link does not take libtsan). ThreadSanitizer's hooks see every
 * access; AddressSanitizer's skip one that repeats an access checked earlier
 * in the block, such as the store of `p->next = q` after a load of p->next. */
TRAMP_HOOK(__tsan_read8, load8)
TRAMP_HOOK(__tsan_write8, store8)
TRAMP_HOOK(__tsan_unaligned_read8, load8)
TRAMP_HOOK(__tsan_unaligned_write8, store8)
TRAMP_HOOK(__tsan_volatile_read8, load8)
TRAMP_HOOK(__tsan_volatile_write8, store8)
TRAMP_NOP(__tsan_read1)
TRAMP_NOP(__tsan_read2)
TRAMP_NOP(__tsan_read4)
TRAMP_NOP(__tsan_read16)
TRAMP_NOP(__tsan_write1)
TRAMP_NOP(__tsan_write2)
TRAMP_NOP(__tsan_write4)
TRAMP_NOP(__tsan_write16)
TRAMP_NOP(__tsan_unaligned_read2)
TRAMP_NOP(__tsan_unaligned_read4)
TRAMP_NOP(__tsan_unaligned_read16)
TRAMP_NOP(__tsan_unaligned_write2)
TRAMP_NOP(__tsan_unaligned_write4)
TRAMP_NOP(__tsan_unaligned_write16)
TRAMP_NOP(__tsan_volatile_read1)
TRAMP_NOP(__tsan_volatile_read2)
TRAMP_NOP(__tsan_volatile_read4)
TRAMP_NOP(__tsan_volatile_read16)
TRAMP_NOP(__tsan_volatile_write1)
TRAMP_NOP(__tsan_volatile_write2)
TRAMP_NOP(__tsan_volatile_write4)
TRAMP_NOP(__tsan_volatile_write16)
TRAMP_NOP(__tsan_func_entry)
TRAMP_NOP(__tsan_vptr_read)
TRAMP_NOP_N(__tsan_vptr_update)
TRAMP_NOP_N(__tsan_read_range)
TRAMP_NOP_N(__tsan_write_range)
__attribute__((visibility("default"))) void __tsan_init(void) {}
__attribute__((visibility("default"))) void __tsan_func_exit(void) {}

/* The instrumented code's atomic operations become calls; these perform
 * them (sequentially consistent, the strongest order any caller asks). */
#define TRAMP_SC __ATOMIC_SEQ_CST
#define TRAMP_ATOMICS(N, T)                                                      \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_load(const volatile T *a, int mo) { \
        (void)mo; return __atomic_load_n(a, TRAMP_SC); }                         \
    __attribute__((visibility("default"))) void __tsan_atomic##N##_store(volatile T *a, T v, int mo) { \
        (void)mo; __atomic_store_n(a, v, TRAMP_SC); }                            \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_exchange_n(a, v, TRAMP_SC); }                  \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_add(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_add(a, v, TRAMP_SC); }                   \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_sub(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_sub(a, v, TRAMP_SC); }                   \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_and(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_and(a, v, TRAMP_SC); }                   \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_or(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_or(a, v, TRAMP_SC); }                    \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_xor(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_xor(a, v, TRAMP_SC); }                   \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_fetch_nand(volatile T *a, T v, int mo) { \
        (void)mo; return __atomic_fetch_nand(a, v, TRAMP_SC); }                  \
    __attribute__((visibility("default"))) int __tsan_atomic##N##_compare_exchange_strong( \
        volatile T *a, T *c, T v, int mo, int fmo) {                             \
        (void)mo; (void)fmo;                                                     \
        return __atomic_compare_exchange_n(a, c, v, 0, TRAMP_SC, TRAMP_SC); }    \
    __attribute__((visibility("default"))) int __tsan_atomic##N##_compare_exchange_weak( \
        volatile T *a, T *c, T v, int mo, int fmo) {                             \
        (void)mo; (void)fmo;                                                     \
        return __atomic_compare_exchange_n(a, c, v, 1, TRAMP_SC, TRAMP_SC); }    \
    __attribute__((visibility("default"))) T __tsan_atomic##N##_compare_exchange_val( \
        volatile T *a, T c, T v, int mo, int fmo) {                              \
        (void)mo; (void)fmo;                                                     \
        __atomic_compare_exchange_n(a, &c, v, 0, TRAMP_SC, TRAMP_SC); return c; }

TRAMP_ATOMICS(8, unsigned char)
TRAMP_ATOMICS(16, unsigned short)
TRAMP_ATOMICS(32, unsigned int)
TRAMP_ATOMICS(64, unsigned long long)
__attribute__((visibility("default"))) void __tsan_atomic_thread_fence(int mo) {
    (void)mo; __atomic_thread_fence(TRAMP_SC); }
__attribute__((visibility("default"))) void __tsan_atomic_signal_fence(int mo) {
    (void)mo; __atomic_signal_fence(TRAMP_SC); }

/* clang: -fsanitize-coverage=edge,trace-loads,trace-stores */
TRAMP_HOOK(__sanitizer_cov_load8, load8)
TRAMP_HOOK(__sanitizer_cov_store8, store8)
TRAMP_NOP(__sanitizer_cov_load1)
TRAMP_NOP(__sanitizer_cov_load2)
TRAMP_NOP(__sanitizer_cov_load4)
TRAMP_NOP(__sanitizer_cov_load16)
TRAMP_NOP(__sanitizer_cov_store1)
TRAMP_NOP(__sanitizer_cov_store2)
TRAMP_NOP(__sanitizer_cov_store4)
TRAMP_NOP(__sanitizer_cov_store16)
__attribute__((visibility("default"))) void __sanitizer_cov_trace_pc_guard_init(unsigned *a, unsigned *b) { (void)a; (void)b; }
__attribute__((visibility("default"))) void __sanitizer_cov_trace_pc_guard(unsigned *g) { (void)g; }

#ifdef __cplusplus
}
#endif
