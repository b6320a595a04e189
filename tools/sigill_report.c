/* A SIGILL handler for LD_PRELOAD (tools/device_f5_cpu.sh): prints the faulting address as library + offset,
 * the first instruction bytes and the process's AMX permission (arch_prctl ARCH_GET_XCOMP_PERM), then exits 99;
 * map the offset with objdump -d on the same library. Not part of vox. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <ucontext.h>
static void h(int sig, siginfo_t *si, void *uc_) {
    ucontext_t *uc = uc_;
    void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
    Dl_info di; memset(&di, 0, sizeof di);
    dladdr(pc, &di);
    unsigned long perm = 0, tperm = 0;
    long r1 = syscall(SYS_arch_prctl, 0x1022, &perm);   /* ARCH_GET_XCOMP_PERM */
    long r2 = syscall(SYS_arch_prctl, 0x1024, &tperm);  /* ARCH_GET_XCOMP_GUEST_PERM (info only) */
    char buf[640];
    int n = snprintf(buf, sizeof buf, "SIG %d code %d at %p: %s + 0x%lx; tid %ld pid %d; XCOMP_PERM %ld 0x%lx guest %ld 0x%lx; bytes",
                     sig, si->si_code, pc, di.dli_fname ? di.dli_fname : "?", (unsigned long)((char *)pc - (char *)di.dli_fbase),
                     (long)syscall(SYS_gettid), getpid(), r1, perm, r2, tperm);
    unsigned char *b = pc;
    for (int i = 0; i < 8 && n < 600; i++) n += snprintf(buf + n, sizeof buf - n, " %02x", b[i]);
    buf[n++] = '\n';
    write(2, buf, n);
    _exit(99);
}
__attribute__((constructor)) static void init(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
}
