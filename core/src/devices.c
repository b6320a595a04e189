/* vox_devices: what this machine offers vox: the CPU, memory and the Vulkan devices. */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "strbuf.h"
#include "vox.h"
#include "vulkan/vk.h"
#if defined(__APPLE__)
#  include <sys/sysctl.h>
#endif

static char *devices_json;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void cpu_model(char *out, size_t cap) {
    snprintf(out, cap, "unknown CPU");
#if defined(__APPLE__)
    size_t len = cap;
    if (sysctlbyname("machdep.cpu.brand_string", out, &len, NULL, 0) != 0) snprintf(out, cap, "unknown CPU");
    return;
#endif
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    /* aarch64 kernels print no "model name": the board ("Model", e.g. a Raspberry Pi) or the core's
     * implementer and part numbers */
    char impl[32] = "", part[32] = "";
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (!c) continue;
        char *v = c + 1;
        while (*v == ' ') v++;
        v[strcspn(v, "\n")] = '\0';
        if (!strncmp(line, "model name", 10) || !strncmp(line, "Model\t", 6)) {
            snprintf(out, cap, "%s", v);
            found = 1;
            break;
        }
        if (!impl[0] && !strncmp(line, "CPU implementer", 15)) snprintf(impl, sizeof impl, "%s", v);
        if (!part[0] && !strncmp(line, "CPU part", 8)) snprintf(part, sizeof part, "%s", v);
    }
    if (!found && impl[0]) snprintf(out, cap, "aarch64 CPU (implementer %s, part %s)", impl, part[0] ? part : "?");
    fclose(f);
}

/* Memory this process may use: the cgroup limit when there is one, else physical memory. */
static unsigned long long memory_bytes(void) {
    unsigned long long phys = (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE);
    const char *files[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f) continue;
        unsigned long long lim = 0;
        if (fscanf(f, "%llu", &lim) == 1 && lim > 0 && lim < phys) phys = lim;
        fclose(f);
    }
    return phys;
}

static void build(void) {
#if defined(__linux__)
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
#else
    int usable = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
    char name[256];
    cpu_model(name, sizeof name);
    const vx_cpu_info *c = vx_cpu();
    vx_buf b = {0};
    vx_buf_printf(&b, "{\"cpu\":{\"name\":");
    vx_buf_json_string(&b, name, (size_t)-1);
    vx_buf_printf(&b, ",\"threads\":%d,\"kernels\":", usable);
    vx_buf_json_string(&b, c->name, (size_t)-1);
    /* the path the kernels run (VOX_CPU or the best), why, what its convolution kernels compute, and
     * every path with whether this CPU has it; error: the refusal engine creation returns */
    vx_buf_printf(&b, ",\"kernels_why\":");
    vx_buf_json_string(&b, c->why, (size_t)-1);
    if (c->error[0]) {
        vx_buf_printf(&b, ",\"error\":");
        vx_buf_json_string(&b, c->error, (size_t)-1);
    }
    const vx_dot_caps dots = vx_cpu_dots();
    vx_buf_printf(&b, ",\"dots\":{\"int8\":");
    if (dots.int8) vx_buf_json_string(&b, dots.int8, (size_t)-1);
    else vx_buf_printf(&b, "null");
    vx_buf_printf(&b, ",\"bf16\":");
    if (dots.bf16) vx_buf_json_string(&b, dots.bf16, (size_t)-1);
    else vx_buf_printf(&b, "null");
    vx_buf_printf(&b, ",\"bf16_rounds_x\":%s,\"bf16_tiles\":%s,\"q8\":", dots.bf16_rounds_x ? "true" : "false",
                  dots.bf16_tiles ? "true" : "false");
    if (dots.q8) vx_buf_json_string(&b, dots.q8, (size_t)-1);
    else vx_buf_printf(&b, "null");
    vx_buf_printf(&b, "},\"paths\":[");
    for (int p = 0; p < VX_PATHS; p++) {
        const vx_path_desc *d = vx_path((vx_cpu_path)p);
        vx_buf_printf(&b, "%s{\"name\":\"%s\",\"supported\":%s,\"needs\":", p ? "," : "", d->name,
                      vx_cpu_supports((vx_cpu_path)p) ? "true" : "false");
        vx_buf_json_string(&b, d->needs, (size_t)-1);
        vx_buf_printf(&b, "}");
    }
    vx_buf_printf(&b, "],\"features\":{\"avx2\":%d,\"fma\":%d,\"f16c\":%d,\"avxvnni\":%d,\"avx512f\":%d,"
                      "\"avx512bw\":%d,\"avx512dq\":%d,\"avx512vl\":%d,\"avx512vnni\":%d,\"avx512bf16\":%d,"
                      "\"amx\":%d,\"neon\":%d,\"dotprod\":%d,\"i8mm\":%d,\"bf16\":%d}},\"memory_bytes\":%llu,"
                      "\"gpus\":[",
                  c->avx2, c->fma, c->f16c, c->avxvnni, c->avx512f, c->avx512bw, c->avx512dq, c->avx512vl,
                  c->avx512vnni, c->avx512bf16, c->amx_tile, c->neon, c->dotprod, c->i8mm, c->bf16, memory_bytes());
    int n;
    const vx_vk_device_info *d = vx_vk_devices(&n);
    for (int i = 0; i < n; i++) {
        vx_buf_printf(&b, "%s{\"index\":%d,\"backend\":\"vulkan\",\"name\":", i ? "," : "", d[i].index);
        vx_buf_json_string(&b, d[i].name, (size_t)-1);
        vx_buf_printf(&b, ",\"type\":\"%s\",\"software\":%s,\"api_version\":\"%u.%u.%u\",\"vendor_id\":%u,"
                          "\"device_id\":%u,\"memory_total\":%llu,\"memory_free\":%llu,\"memory_free_estimated\":%s,"
                          "\"subgroup_size\":%u,\"max_storage_buffer_range\":%llu,\"timestamps\":%s,"
                          "\"cooperative_matrix\":%s,\"cooperative_matrix_shapes\":",
                      d[i].type_name, d[i].software ? "true" : "false", VK_API_VERSION_MAJOR(d[i].api_version),
                      VK_API_VERSION_MINOR(d[i].api_version), VK_API_VERSION_PATCH(d[i].api_version), d[i].vendor_id,
                      d[i].device_id, (unsigned long long)d[i].memory_total, (unsigned long long)d[i].memory_free,
                      d[i].memory_free_estimated ? "true" : "false", d[i].subgroup_size,
                      (unsigned long long)d[i].max_storage_buffer_range, d[i].timestamp_period_ns > 0 ? "true" : "false",
                      d[i].coopmat ? "true" : "false");
        vx_buf_json_string(&b, d[i].coopmat_shapes, (size_t)-1);   /* f16 x f16 -> f32 MxNxK ("" when none) */
        /* VK_NV_cooperative_matrix2 (the workgroup-scope GEMM): its f16 entries, "MgxNgxKg@invocations" */
        vx_buf_printf(&b, ",\"cooperative_matrix2\":%s,\"cooperative_matrix2_shapes\":", d[i].coopmat2 ? "true" : "false");
        vx_buf_json_string(&b, d[i].coopmat2_shapes, (size_t)-1);
        vx_buf_printf(&b, "}");
    }
    vx_buf_printf(&b, "],\"vulkan\":{\"available\":%s,\"reason\":", n ? "true" : "false");
    const char *why = vx_vk_unavailable_reason();
    if (why) vx_buf_json_string(&b, why, (size_t)-1);
    else vx_buf_printf(&b, "null");
    vx_buf_printf(&b, "}}");
    devices_json = vx_buf_take(&b);
}

const char *vox_devices(void) {
    pthread_once(&devices_once, build);
    return devices_json ? devices_json : "{}";
}
