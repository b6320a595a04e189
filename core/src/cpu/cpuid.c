/* CPU feature detection: which instruction sets the CPU has AND the operating system lets us use, and
 * the choice of the kernel path (kernels.h lists the paths). x86: CPUID and XCR0; aarch64: the
 * kernel's HWCAP bits (Linux) or sysctl hw.optional.arm.* (macOS).
 *
 * A CPUID bit alone is not enough: AVX and AVX-512 registers are only usable when the OS saves their
 * state on context switches (XCR0, read with XGETBV, after checking OSXSAVE), and AMX tile data on
 * Linux additionally needs a per-process permission request (arch_prctl ARCH_REQ_XCOMP_PERM).
 *
 * The kernel path is chosen here once per process (kernels.h rule 2): the best one the CPU has, or the
 * one VOX_CPU names. A path the CPU lacks, an unknown name, or the old VOX_CPU_PATH variable is never
 * replaced by another path: the choice is recorded as an error that engine creation returns
 * (vx_cpu_check), so a benchmark or test can never silently run something else than it asked for. */
#include "../error.h"
#include "kernels.h"

#include <stddef.h>
#include <stdio.h>
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
#if defined(__aarch64__) && defined(__linux__)
#  include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#  include <sys/sysctl.h>
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

#if defined(__aarch64__)
/* Advanced SIMD is architectural on aarch64; the extensions are reported by the kernel (HWCAP bits are
 * set only when the kernel also enables them, so no further OS check is needed). The HWCAP values are
 * those of the Linux uapi (asm/hwcap.h), spelled out for older C libraries' headers. */
static void detect_arm(vx_cpu_info *c) {
    c->neon = 1;
#  if defined(__linux__)
    enum { HWCAP_ASIMDDP_ = 1u << 20 };
    const unsigned long long HWCAP2_I8MM_ = 1ull << 13, HWCAP2_BF16_ = 1ull << 14;
    const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    c->dotprod = (hw & HWCAP_ASIMDDP_) != 0;
    c->i8mm = (hw2 & HWCAP2_I8MM_) != 0;
    c->bf16 = (hw2 & HWCAP2_BF16_) != 0;
#  elif defined(__APPLE__)
    static const struct { const char *name; size_t off; } feats[] = {
        {"hw.optional.arm.FEAT_DotProd", offsetof(vx_cpu_info, dotprod)},
        {"hw.optional.arm.FEAT_I8MM", offsetof(vx_cpu_info, i8mm)},
        {"hw.optional.arm.FEAT_BF16", offsetof(vx_cpu_info, bf16)},
    };
    for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++) {
        int v = 0;
        size_t len = sizeof v;
        if (sysctlbyname(feats[i].name, &v, &len, NULL, 0) == 0 && v) *(int *)((char *)c + feats[i].off) = 1;
    }
#  endif
}
#endif

/* The paths, each an exact set of instruction-set extensions (kernels.h). */
static const vx_path_desc paths[VX_PATHS] = {
    [VX_PATH_SCALAR] = {"scalar", VX_ISA_SCALAR, 0, 0, "nothing (portable C)"},
    [VX_PATH_AVX2] = {"avx2", VX_ISA_AVX2, 0, 0, "AVX2, FMA, F16C"},
    [VX_PATH_AVX2_VNNI] = {"avx2-vnni", VX_ISA_AVX2, 1, 0, "AVX2, FMA, F16C, AVX-VNNI"},
    [VX_PATH_AVX512] = {"avx512", VX_ISA_AVX512, 0, 0, "AVX2, FMA, F16C, AVX-512 F/BW/DQ/VL"},
    [VX_PATH_AVX512_VNNI] = {"avx512-vnni", VX_ISA_AVX512, 1, 0, "AVX2, FMA, F16C, AVX-512 F/BW/DQ/VL, AVX512-VNNI"},
    [VX_PATH_AVX512_VNNI_BF16] = {"avx512-vnni-bf16", VX_ISA_AVX512, 1, 1,
                                  "AVX2, FMA, F16C, AVX-512 F/BW/DQ/VL, AVX512-VNNI, AVX512-BF16"},
    [VX_PATH_AMX] = {"amx", VX_ISA_AVX512, 1, 1,
                     "AVX2, FMA, F16C, AVX-512 F/BW/DQ/VL, AVX512-VNNI, AVX512-BF16, AMX-TILE/INT8/BF16 (and the "
                     "kernel's permission to use the tiles)"},
    [VX_PATH_NEON] = {"neon", VX_ISA_NEON, 0, 0, "aarch64 Advanced SIMD (NEON)"},
    [VX_PATH_NEON_DOTPROD] = {"neon-dotprod", VX_ISA_NEON, 1, 0, "aarch64 NEON, DotProd (SDOT)"},
    [VX_PATH_NEON_I8MM] = {"neon-i8mm", VX_ISA_NEON, 1, 0, "aarch64 NEON, DotProd, I8MM (USDOT/SMMLA)"},
    [VX_PATH_NEON_I8MM_BF16] = {"neon-i8mm-bf16", VX_ISA_NEON, 1, 1, "aarch64 NEON, DotProd, I8MM, BF16 (BFDOT)"},
};

const vx_path_desc *vx_path(vx_cpu_path p) { return p >= 0 && p < VX_PATHS ? &paths[p] : NULL; }

int vx_path_parse(const char *name) {
    for (int p = 0; p < VX_PATHS; p++)
        if (strcmp(name, paths[p].name) == 0) return p;
    return -1;
}

static int has(const vx_cpu_info *c, vx_cpu_path p) {
    const int avx2 = c->avx2 && c->fma && c->f16c, avx512 = avx2 && c->avx512f && c->avx512bw && c->avx512dq && c->avx512vl;
    switch (p) {
    case VX_PATH_SCALAR: return 1;
    case VX_PATH_AVX2: return avx2;
    case VX_PATH_AVX2_VNNI: return avx2 && c->avxvnni;
    case VX_PATH_AVX512: return avx512;
    case VX_PATH_AVX512_VNNI: return avx512 && c->avx512vnni;
    case VX_PATH_AVX512_VNNI_BF16: return avx512 && c->avx512vnni && c->avx512bf16;
    case VX_PATH_AMX: return avx512 && c->avx512vnni && c->avx512bf16 && c->amx_tile && c->amx_int8 && c->amx_bf16;
    case VX_PATH_NEON: return c->neon;
    case VX_PATH_NEON_DOTPROD: return c->neon && c->dotprod;
    case VX_PATH_NEON_I8MM: return c->neon && c->dotprod && c->i8mm;
    case VX_PATH_NEON_I8MM_BF16: return c->neon && c->dotprod && c->i8mm && c->bf16;
    default: return 0;
    }
}

int vx_cpu_supports(vx_cpu_path p) { return has(vx_cpu(), p); }

static void append(char *dst, size_t cap, const char *s) {
    size_t n = strlen(dst);
    if (n + strlen(s) < cap) memcpy(dst + n, s, strlen(s) + 1);
}

/* "scalar, avx2, avx2-vnni": the paths this CPU has (or, with want 0, those it lacks) */
static void list_paths(const vx_cpu_info *c, int want, char *out, size_t cap) {
    out[0] = '\0';
    for (int p = 0; p < VX_PATHS; p++)
        if (has(c, (vx_cpu_path)p) == want) {
            if (out[0]) append(out, cap, ", ");
            append(out, cap, paths[p].name);
        }
}

/* VOX_CPU_MASK=avx512f,avxvnni,...: features detection then treats as absent, so one machine can show
 * what a smaller CPU gets (which paths exist, what is refused); for tests. Unknown names are ignored. */
static void apply_mask(vx_cpu_info *c, const char *mask) {
    static const struct { const char *name; size_t off; } feats[] = {
#define F(x) {#x, offsetof(vx_cpu_info, x)}
        F(avx2), F(fma), F(f16c), F(avxvnni), F(avx512f), F(avx512bw), F(avx512dq), F(avx512vl), F(avx512vnni),
        F(avx512bf16), F(dotprod), F(i8mm), F(bf16), F(amx_tile), F(amx_int8), F(amx_bf16),
#undef F
    };
    char buf[256];
    snprintf(buf, sizeof buf, "%s", mask);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++)
            if (strcmp(t, feats[i].name) == 0) *(int *)((char *)c + feats[i].off) = 0;
}

static void detect(void) {
    memset(&info, 0, sizeof info);
#ifdef VX_HAVE_CPUID
    detect_x86(&info);
#endif
#if defined(__aarch64__)
    detect_arm(&info);
#endif
    const char *mask = getenv("VOX_CPU_MASK");
    if (mask && *mask) apply_mask(&info, mask);
    vx_cpu_path best = VX_PATH_SCALAR;
    for (int p = 0; p < VX_PATHS; p++)
        if (has(&info, (vx_cpu_path)p)) best = (vx_cpu_path)p; /* the list is in increasing order */
    info.best = best;
    info.path = best;
    char avail[160];
    list_paths(&info, 1, avail, sizeof avail);
    snprintf(info.why, sizeof info.why, "the best path this CPU has (it has: %s)", avail);
    const char *old = getenv("VOX_CPU_PATH"), *want = getenv("VOX_CPU");
    if (old && *old) { /* renamed: refuse rather than silently ignore it */
        snprintf(info.error, sizeof info.error,
                 "VOX_CPU_PATH is no longer read: set VOX_CPU to one of auto, scalar, avx2, avx2-vnni, avx512, "
                 "avx512-vnni, avx512-vnni-bf16, amx, neon, neon-dotprod, neon-i8mm, neon-i8mm-bf16 (this CPU has: %s)",
                 avail);
    } else if (want && *want && strcmp(want, "auto") != 0) {
        const int p = vx_path_parse(want);
        if (p < 0) {
            snprintf(info.error, sizeof info.error,
                     "VOX_CPU=%s: unknown kernel path; use auto, scalar, avx2, avx2-vnni, avx512, avx512-vnni, "
                     "avx512-vnni-bf16, amx, neon, neon-dotprod, neon-i8mm or neon-i8mm-bf16 (this CPU has: %s)", want,
                     avail);
        } else if (!has(&info, (vx_cpu_path)p)) {
            snprintf(info.error, sizeof info.error, "VOX_CPU=%s: not supported on this CPU (the path needs %s; this CPU "
                     "has: %s)", want, paths[p].needs, avail);
        } else {
            info.path = (vx_cpu_path)p;
            snprintf(info.why, sizeof info.why, "VOX_CPU=%s (this CPU has: %s)", want, avail);
        }
    }
    snprintf(info.name, sizeof info.name, "%s", paths[info.path].name);
}

const vx_cpu_info *vx_cpu(void) {
    pthread_once(&once, detect);
    return &info;
}

vox_status vx_cpu_check(void) {
    const vx_cpu_info *c = vx_cpu();
    return c->error[0] ? vox_set_error(VOX_ERR_UNSUPPORTED, "%s", c->error) : VOX_OK;
}
