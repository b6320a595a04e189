/* CPU feature detection: which instruction sets the CPU has AND the operating system lets us use.
 *
 * A CPUID bit alone is not enough: AVX and AVX-512 registers are only usable when the OS saves their
 * state on context switches (XCR0, read with XGETBV, after checking OSXSAVE), and AMX tile data on
 * Linux additionally needs a per-process permission request (arch_prctl ARCH_REQ_XCOMP_PERM).
 *
 * The kernel path is chosen here once per process (kernels.h rule 2). VOX_CPU_PATH=scalar|avx2|avx512
 * forces a LOWER path than the best one, which is how the tests and benchmarks exercise every path on
 * one machine; asking for a path the CPU lacks falls back to the best available one. */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(VOX_X86) && (defined(__x86_64__) || defined(__i386__))
#  include <cpuid.h>
#  if defined(__linux__)
#    include <sys/syscall.h>
#    include <unistd.h>
#  endif
#  define VX_HAVE_CPUID 1
#endif

static vx_cpu_info info;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#ifdef VX_HAVE_CPUID
static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    /* The instruction itself (not _xgetbv) so this file needs no -mxsave. */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Linux gates AMX tile data behind a per-process opt-in; without it the first tile instruction
 * raises SIGILL. Requesting is cheap and idempotent. Other OSes: assume not usable. */
static int amx_permitted(void) {
#  if defined(__linux__) && defined(__x86_64__)
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#  else
    return 0;
#  endif
}

static void detect_x86(vx_cpu_info *c) {
    unsigned a, b, cx, d;
    if (!__get_cpuid(0, &a, &b, &cx, &d)) return;
    unsigned max_leaf = a;
    if (!__get_cpuid(1, &a, &b, &cx, &d)) return;
    int osxsave = (cx >> 27) & 1, avx = (cx >> 28) & 1;
    c->fma = (cx >> 12) & 1;
    c->f16c = (cx >> 29) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int os_ymm = avx && (xcr0 & 0x6) == 0x6;              /* XMM and YMM state */
    int os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;         /* opmask, ZMM_Hi256, Hi16_ZMM */
    int os_tile = (xcr0 & 0x60000) == 0x60000;            /* XTILECFG, XTILEDATA */
    if (!os_ymm) {
        c->fma = c->f16c = 0;
        return;
    }
    if (max_leaf < 7) return;
    __cpuid_count(7, 0, a, b, cx, d);
    c->avx2 = (b >> 5) & 1;
    if (os_zmm) {
        c->avx512f = (b >> 16) & 1;
        c->avx512dq = (b >> 17) & 1;
        c->avx512bw = (b >> 30) & 1;
        c->avx512vl = (b >> 31) & 1;
        c->avx512vnni = (cx >> 11) & 1;
    }
    int amx_bf16 = (d >> 22) & 1, amx_tile = (d >> 24) & 1, amx_int8 = (d >> 25) & 1;
    unsigned sub_max = a;
    if (sub_max >= 1) {
        __cpuid_count(7, 1, a, b, cx, d);
        c->avxvnni = (a >> 4) & 1;
        if (os_zmm) c->avx512bf16 = (a >> 5) & 1;
    }
    if (amx_tile && os_tile && amx_permitted()) {
        c->amx_tile = 1;
        c->amx_int8 = amx_int8;
        c->amx_bf16 = amx_bf16;
    }
}
#endif

static vx_cpu_path parse_path(const char *s, vx_cpu_path fallback) {
    if (!s || !*s) return fallback;
    if (strcmp(s, "scalar") == 0) return VX_PATH_SCALAR;
    if (strcmp(s, "avx2") == 0) return VX_PATH_AVX2;
    if (strcmp(s, "avx512") == 0) return VX_PATH_AVX512;
    return fallback; /* "auto" or anything unknown: the best path */
}

static void append(char *dst, size_t cap, const char *s) {
    size_t n = strlen(dst);
    if (n + strlen(s) < cap) memcpy(dst + n, s, strlen(s) + 1);
}

static void detect(void) {
    memset(&info, 0, sizeof info);
#ifdef VX_HAVE_CPUID
    detect_x86(&info);
#endif
    vx_cpu_path best = VX_PATH_SCALAR;
    if (info.avx2 && info.fma && info.f16c) best = VX_PATH_AVX2;
    if (best == VX_PATH_AVX2 && info.avx512f && info.avx512bw && info.avx512dq && info.avx512vl)
        best = VX_PATH_AVX512;
    vx_cpu_path want = parse_path(getenv("VOX_CPU_PATH"), best);
    info.path = want < best ? want : best;

    static const char *names[] = {"scalar", "avx2", "avx512"};
    strcpy(info.name, names[info.path]);
    if (info.path == VX_PATH_AVX512) {
        if (info.avx512vnni) append(info.name, sizeof info.name, "+vnni");
        if (info.avx512bf16) append(info.name, sizeof info.name, "+bf16");
        if (info.amx_tile) append(info.name, sizeof info.name, "+amx");
    }
}

const vx_cpu_info *vx_cpu(void) {
    pthread_once(&once, detect);
    return &info;
}
