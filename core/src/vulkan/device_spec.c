/* The --device string: which device runs the model, and its options. */

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "vk.h"

/* auto: the non-software device with the most memory (ties: the lowest index); -1 when none. */
static int pick(int allow_software) {
    int n, best = -1;
    const vx_vk_device_info *d = vx_vk_devices(&n);
    for (int i = 0; i < n; i++) {
        if (d[i].software) continue;
        if (best < 0 || d[i].memory_total > d[best].memory_total) best = i;
    }
    if (best < 0 && allow_software && n > 0) best = 0;
    return best < 0 ? -1 : d[best].index;
}

vox_status vx_device_spec_parse(const char *spec, vx_device_spec *out) {
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) spec = "cpu";
    const char *env = getenv("VOX_GPU_STRICT");
    if (env && !strcmp(env, "1")) out->strict = 1;
    size_t len = strcspn(spec, ",");
    char head[64];
    if (len >= sizeof head) return vox_set_error(VOX_ERR_DEVICE, "device \"%s\": unknown device", spec);
    memcpy(head, spec, len);
    head[len] = '\0';
    for (const char *o = spec + len; *o == ',';) {
        o++;
        size_t ol = strcspn(o, ",");
        const char *eq = memchr(o, '=', ol);
        size_t kl = eq ? (size_t)(eq - o) : ol, vl = eq ? ol - kl - 1 : 0;
        if (ol == 6 && !strncmp(o, "strict", 6)) {
            out->strict = 1;
        } else if (eq && kl > 0 && vl > 0 && kl < sizeof out->opts[0].key && vl < sizeof out->opts[0].value &&
                   out->n_opts < (int)(sizeof out->opts / sizeof out->opts[0])) {
            /* key=value: a later one of the same key wins */
            int i = 0;
            while (i < out->n_opts && !(strlen(out->opts[i].key) == kl && !strncmp(out->opts[i].key, o, kl))) i++;
            if (i == out->n_opts) out->n_opts++;
            memcpy(out->opts[i].key, o, kl);
            out->opts[i].key[kl] = '\0';
            memcpy(out->opts[i].value, eq + 1, vl);
            out->opts[i].value[vl] = '\0';
        } else {
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "device \"%s\": unknown option \"%.*s\" (options: strict, "
                                 "and the model's key=value options)", spec, (int)ol, o);
        }
        o += ol;
    }
    if (!strcmp(head, "cpu")) return VOX_OK;
    if (!strcmp(head, "auto")) {
        out->asked_auto = 1;
        int i = pick(0);
        if (i >= 0) {
            out->gpu = 1;
            out->index = i;
        }
        return VOX_OK;
    }
    const char *num = NULL;
    if (!strncmp(head, "gpu", 3) && (head[3] == '\0' || head[3] == ':')) num = head[3] ? head + 4 : NULL;
    else if (!strncmp(head, "vulkan", 6) && (head[6] == '\0' || head[6] == ':')) num = head[6] ? head + 7 : NULL;
    else
        return vox_set_error(VOX_ERR_DEVICE, "device \"%s\": unknown device (cpu, auto, gpu[:N], vulkan[:N])",
                             spec);
    int n;
    const vx_vk_device_info *d = vx_vk_devices(&n);
    if (!n)
        return vox_set_error(VOX_ERR_DEVICE, "device \"%s\": no Vulkan device (%s); use --device cpu", spec,
                             vx_vk_unavailable_reason());
    out->gpu = 1;
    if (!num) {
        out->index = pick(1);
        return VOX_OK;
    }
    char *end;
    long idx = strtol(num, &end, 10);
    if (!*num || *end || idx < 0)
        return vox_set_error(VOX_ERR_DEVICE, "device \"%s\": the index must be a number (vox devices lists "
                             "them)", spec);
    for (int i = 0; i < n; i++)
        if (d[i].index == idx) {
            out->index = (int)idx;
            return VOX_OK;
        }
    return vox_set_error(VOX_ERR_DEVICE, "device \"%s\": there is no Vulkan device %ld (vox devices lists them)",
                         spec, idx);
}
